// The Vercel AI SDK as an agent built on it calls a model: streamText (`ai`
// 7.0.173) over createAnthropic (`@ai-sdk/anthropic` 4.0.105) with their
// defaults, each call's fullStream read to its end. The AI SDK retries on its
// own, before the stream only: maxRetries 2, waits 2 s then 4 s with no
// jitter, retry-after(-ms) honoured under 60 s; it sends no retry header.
// Its `timeout: {chunkMs}` is a real idle timeout between stream chunks, set
// here from --idle-timeout (the per-request timeout the framework has).
//
// What the agent makes of it, reading fullStream as the AI SDK's docs show:
// an `error` part, or an `abort` part from its own timeouts (the stream then
// just ends: an agent that reads only textStream gets an empty answer), is
// the call's error. An error the AI SDK raises as its own (AISDKError:
// APICallError, RetryError once it has retried, StreamProviderError,
// JSONParseError) or its TimeoutError ends the task env_error, a 400
// harness_error; anything else escapes (crash). Its timeouts cover the stream
// only ({firstChunkMs, chunkMs}, set from --idle-timeout): nothing times out
// the response headers, so slow headers hang until the watchdog.
// relsim audit infers: layered, s = 2, r = 0, backoff 2 s 2^k with no jitter,
// retry-after honoured, once a stream without message_stop is accepted as
// the answer and slow headers as a hang (docs/audit.md, Frameworks, as their
// source says).
//
//   node ai_sdk_loop.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--idle-timeout 0.5] [--hang-after 10]
import { streamText, AISDKError } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { TaskEnd, main } from './common.mjs';

function ended(e, call) {
  const status = e?.statusCode ?? e?.lastError?.statusCode;
  const what = `call ${call}: ${e?.constructor?.name ?? 'Error'}: ${String(e?.message ?? e)}`.slice(0, 900);
  if (status === 400) return new TaskEnd('harness_error', what);
  if (AISDKError.isInstance(e) || e?.name === 'TimeoutError') return new TaskEnd('env_error', what);
  return e;
}

main(async (ctx, opts) => {
  const provider = createAnthropic({
    baseURL: `${ctx.baseURL}/v1`, apiKey: 'relsim-harness',
    fetch: (url, init) => { ctx.progress(); return fetch(url, init); },
  });
  const model = provider('relsim-mock');
  for (let call = 0; call < ctx.calls; call++) {
    const result = streamText({
      model, prompt: 'hello', maxOutputTokens: 64, abortSignal: ctx.signal,
      timeout: { firstChunkMs: opts.idleTimeout * 1000, chunkMs: opts.idleTimeout * 1000 },
      onError: () => {},  // the error part below is where the agent sees it
    });
    try {
      for await (const part of result.fullStream) {
        ctx.progress();
        if (part.type === 'error') throw part.error;
        // its reason is a string ("TimeoutError: First chunk timeout of 500ms exceeded")
        if (part.type === 'abort' && !ctx.signal.aborted) throw new TaskEnd('env_error', `call ${call}: ${part.reason}`);
      }
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      throw ended(e, call);
    }
  }
});
