// The layered loop: the SDK's retries (maxRetries 2) for errors before the
// stream, an idle timeout on the stream, and stream-layer retries (r = 2) for
// faults inside it; each fault is retried by exactly one layer.
// relsim audit infers: layered, s = 2, r = 2.
//
// The SDK's MessageStream emits 'connect' once the 200 response's headers are
// in, so an error raised before 'connect' comes from the HTTP layer, after the
// SDK's own retries, and one raised after it from the stream. SDK 1.14.0, by
// the mock's fault kind (docs/wire.md):
//   before the stream: the task ends env_error at once (the SDK has retried)
//     slow_headers  APIConnectionTimeoutError (the SDK's timeout is a header timeout)
//     reset         APIConnectionError "Connection error."
//     http_429/500/503/529  RateLimitError / InternalServerError / ServiceUnavailableError / OverloadedError
//     http_400      BadRequestError, never retried: harness_error
//   in the stream: a stream-layer retry (a fresh SDK call), env_error after RETRIES
//     cut           AnthropicError "terminated" (undici's TypeError)
//     no_stop       AnthropicError "stream ended without producing a Message with role=assistant"
//     malformed     AnthropicError from JSON.parse (a SyntaxError)
//     overloaded    APIError, no status, error.type overloaded_error (the event: error)
//     stall         no event for --idle-timeout: this loop aborts the stream (APIUserAbortError)
//
//   node layered_loop.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--header-timeout 1] [--idle-timeout 0.5]
import { Anthropic, TaskEnd, backoffMs, main, makeClient, runCalls, sleep, streamCall } from './common.mjs';

const RETRIES = 2;  // stream-layer retries per call

// One SDK call whose stream is aborted after idleMs without an event; says
// whether the response had connected (the error, if any, came from the stream).
async function attempt(client, ctx, idleMs, state) {
  state.connected = false;
  let timer;
  const arm = (stream) => {
    clearTimeout(timer);
    timer = setTimeout(() => { state.idle = true; stream.abort(); }, idleMs);
  };
  try {
    return await streamCall(client, ctx, {
      onStream: (stream) => {
        stream.on('connect', () => { state.connected = true; arm(stream); });
        stream.on('streamEvent', () => arm(stream));
      },
    });
  } finally {
    clearTimeout(timer);
  }
}

function describe(e, state) {
  const what = state.idle ? 'stream idle (stall)' : `${e?.constructor?.name}: ${e?.message}`;
  return what.slice(0, 900);
}

main((ctx, opts) => {
  const client = makeClient(ctx.baseURL, opts, ctx.progress);
  return runCalls(ctx, async (call) => {
    for (let k = 0; ; k++) {
      const state = { connected: false, idle: false };
      try {
        return await attempt(client, ctx, opts.idleTimeout * 1000, state);
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        if (e instanceof Anthropic.APIError && e.status === 400) throw new TaskEnd('harness_error', describe(e, state));
        if (!state.connected) throw new TaskEnd('env_error', `call ${call}, before the stream: ${describe(e, state)}`);
        if (k === RETRIES) throw new TaskEnd('env_error', `call ${call}, stream retries spent: ${describe(e, state)}`);
        await sleep(backoffMs(k));
      }
    }
  });
});
