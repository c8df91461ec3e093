// LangChain.js as an agent built on it calls a model: ChatAnthropic
// (@langchain/anthropic 1.5.11) with its defaults, each model call streamed
// (model.stream) to its end, its chunks taken as the answer. LangChain builds
// the official SDK with maxRetries 0 and retries around it itself (6 times by
// default, waiting (1 + U) 2^k seconds, only up to the response headers); it
// has no idle timeout and its per-call `timeout` is a deadline over all its
// retries, so none is set here: a stalled stream is abandoned by the watchdog
// (--hang-after, above LangChain's longest wait of 64 s) and reported "hang".
// Whatever it throws escapes the task ("crash"). relsim audit infers: naive,
// s = 6, r = 0, with x-stainless-retry-count 0 on every request
// (docs/audit.md, Frameworks, as their source says).
//
//   node langchain_loop.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--hang-after 70]
import { ChatAnthropic } from '@langchain/anthropic';
import { main } from './common.mjs';

main(async (ctx) => {
  const model = new ChatAnthropic({
    model: 'relsim-mock', apiKey: 'relsim-harness', anthropicApiUrl: ctx.baseURL, maxTokens: 64,
    clientOptions: { fetch: (url, init) => { ctx.progress(); return fetch(url, init); } },
  });
  for (let i = 0; i < ctx.calls; i++) {
    const stream = await model.stream('hello', { signal: ctx.signal });
    for await (const chunk of stream) { ctx.progress(); void chunk; }
  }
});
