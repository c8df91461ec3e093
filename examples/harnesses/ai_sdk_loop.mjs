// The Vercel AI SDK as an agent built on it calls a model: streamText (`ai`
// 7.0.173) over createAnthropic (`@ai-sdk/anthropic` 4.0.105) or, with
// --dialect openai, over createOpenAICompatible (`@ai-sdk/openai-compatible`
// 3.0.92, the one whose `@ai-sdk/provider-utils` 5.0.81 is the one `ai`
// uses) against POST /t/{task}/v1/chat/completions, with their defaults,
// each call's fullStream read to its end. The AI SDK retries on its own,
// before the stream only: maxRetries 2, waits 2 s then 4 s with no jitter,
// retry-after(-ms) honoured under 60 s; 408, 409, 429, 5xx (529 too) and
// connection errors; it reads no x-should-retry and sends no retry header.
// The Anthropic provider reads the stream's first event inside the retry;
// the OpenAI-compatible one does not, so no error in its stream is retried.
// Its `timeout: {chunkMs}` is a real idle timeout between stream chunks, set
// here from --idle-timeout (the per-request timeout the framework has).
//
// What the agent makes of it, reading fullStream as the AI SDK's docs show:
// an `error` part, or an `abort` part from its own timeouts (the stream then
// just ends: an agent that reads only textStream gets an empty answer), is
// the call's error. An error the AI SDK raises as its own (AISDKError:
// APICallError, RetryError once it has retried, StreamProviderError,
// JSONParseError, InvalidResponseDataError) or its TimeoutError ends the
// task env_error, a 400 harness_error; anything else escapes (crash). Its
// timeouts cover the stream only ({firstChunkMs, chunkMs}, set from
// --idle-timeout): nothing times out the response headers, so slow headers
// hang until the watchdog.
// In the OpenAI dialect the provider turns a `data: {"error": ...}` chunk, a
// chunk that is not JSON, and a stream that ends with no finish_reason into
// `error` parts (the stream goes on; [DONE] is never required), and a cut
// into an APICallError.
// relsim audit infers: layered, s = 2, r = 0, backoff 2 s 2^k with no jitter,
// retry-after honoured, once slow headers are accepted as a hang and, over
// the Anthropic provider only, a stream without message_stop as the answer
// (docs/audit.md, Frameworks, as their source says).
//
//   node ai_sdk_loop.mjs --server http://127.0.0.1:PORT [--dialect anthropic|openai] [--concurrency 32]
//                        [--idle-timeout 0.5] [--hang-after 10]
import { streamText, AISDKError } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { TaskEnd, main } from './common.mjs';

function ended(e, call) {
  const status = e?.statusCode ?? e?.lastError?.statusCode;
  const what = `call ${call}: ${e?.constructor?.name ?? 'Error'}: ${String(e?.message ?? e)}`.slice(0, 900);
  if (status === 400) return new TaskEnd('harness_error', what);
  if (AISDKError.isInstance(e) || e?.name === 'TimeoutError') return new TaskEnd('env_error', what);
  return e;
}

main(async (ctx, opts) => {
  const settings = {
    baseURL: `${ctx.baseURL}/v1`, apiKey: 'relsim-harness',
    fetch: (url, init) => { ctx.progress(); return fetch(url, init); },
  };
  const provider = opts.dialect === 'openai' ? createOpenAICompatible({ name: 'relsim', ...settings })
                                             : createAnthropic(settings);
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
}, { dialects: ['anthropic', 'openai'] });
