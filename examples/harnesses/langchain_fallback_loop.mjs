// LangChain.js's fallback between two models, as an agent built on it
// writes it: ChatAnthropic (@langchain/anthropic 1.5.11) with maxRetries 2,
// `.withFallbacks([second])` (@langchain/core 1.4.0), each model call
// streamed (model.stream) to its end. The first model is the task's base
// URL, the second relsim serve's second provider for the same task,
// /t/{task}/fallback (docs/wire.md). Each model's own AsyncCaller makes 3
// attempts (1 + maxRetries), waiting (1 + U) 2^k seconds, only up to the
// response headers; RunnableWithFallbacks then tries the second model, at
// once and with the second's own 3 attempts, but only while no chunk has
// come: `stream()` resolves at the first chunk (AsyncGeneratorWithSetup),
// and an error after it escapes. relsim audit infers: naive, s = 5, r = 0,
// a fallback after 3 (docs/audit.md, Two providers).
//
//   node langchain_fallback_loop.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--hang-after 8]
import { ChatAnthropic } from '@langchain/anthropic';
import { main } from './common.mjs';

main(async (ctx) => {
  const model = (url) => new ChatAnthropic({
    model: 'relsim-mock', apiKey: 'relsim-harness', anthropicApiUrl: url, maxTokens: 64, maxRetries: 2,
    clientOptions: { fetch: (u, init) => { ctx.progress(); return fetch(u, init); } },
  });
  const withFallback = model(ctx.baseURL).withFallbacks([model(`${ctx.baseURL}/fallback`)]);
  for (let i = 0; i < ctx.calls; i++) {
    const stream = await withFallback.stream('hello', { signal: ctx.signal });
    for await (const chunk of stream) { ctx.progress(); void chunk; }
  }
});
