// The loop that multiplies to 9 requests: its own r = 2 retries around the
// SDK's (maxRetries 2) on connection errors and broken streams, and no stream
// idle timeout. relsim audit infers: naive, s = 2, r = 2.
//
// What SDK 1.14.0 raises, by the mock's fault kind (docs/wire.md), and what
// this loop does with it:
//   slow_headers  APIConnectionTimeoutError (after the SDK's 2 retries)  retried here
//   reset         APIConnectionError "Connection error." (after 2 retries) retried here
//   cut           AnthropicError "terminated" (undici's TypeError)        retried here
//   no_stop       AnthropicError "stream ended without producing a Message with role=assistant"  retried here
//   malformed     AnthropicError from JSON.parse (a SyntaxError)          retried here
//   http_429/500/503/529  RateLimitError / InternalServerError / ServiceUnavailableError /
//                 OverloadedError (APIError with that status, after 2 retries)  escapes: crash
//   overloaded    APIError, no status, error.type overloaded_error (the in-stream event: error)  escapes: crash
//   http_400      BadRequestError (status 400, never retried)           escapes: harness_error
//   stall         nothing: finalMessage() never settles; the watchdog reports "hang"
//
//   node naive_loop.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--hang-after 4] [--header-timeout 1]
import { Anthropic, backoffMs, main, makeClient, runCalls, sleep, streamCall } from './common.mjs';

const RETRIES = 2;  // this loop's own retries, on top of the SDK's

// "Transient": a connection error or timeout, or a stream that broke or ended
// without a message. APIConnectionError (and its APIConnectionTimeoutError)
// extends APIError, so it is tested first; every other APIError (a status
// error, the in-stream error event) is not transient here and escapes; a bare
// AnthropicError is the SDK's own complaint about the stream it read.
function transient(e) {
  if (e instanceof Anthropic.APIConnectionError) return true;
  if (e instanceof Anthropic.APIError) return false;
  return e instanceof Anthropic.AnthropicError;
}

main((ctx, opts) => {
  const client = makeClient(ctx.baseURL, opts, ctx.progress);
  return runCalls(ctx, async () => {
    for (let k = 0; ; k++) {
      try {
        return await streamCall(client, ctx);
      } catch (e) {
        if (!transient(e) || k === RETRIES || ctx.signal.aborted) throw e;
        await sleep(backoffMs(k));
      }
    }
  });
});
