// LlamaIndex.TS as an agent built on it calls a model: the Anthropic LLM of
// `@llamaindex/anthropic` 0.3.26, each call streamed (llm.chat({stream:
// true})) to its end, its deltas taken as the answer. LlamaIndex does not
// retry itself: it builds the official SDK (`@anthropic-ai/sdk` 0.58.0,
// pinned by the provider) with maxRetries 10 and a 60 s timeout that covers
// only the response headers; here the timeout is --header-timeout (the
// per-request timeout it has). It has no idle timeout and its chat() takes no
// abort signal, so a stalled stream is left to the watchdog (--hang-after:
// "hang"). Whatever it throws escapes the task ("crash"); a 400 is the
// harness's own bug. relsim audit infers: naive, s = 10, r = 0, the SDKs'
// backoff, accepting no_stop=done (docs/audit.md, Frameworks, as their
// source says).
//
//   node llamaindex_loop.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--header-timeout 1] [--hang-after 5]
import { Anthropic, AnthropicSession } from '@llamaindex/anthropic';
import { TaskEnd, main } from './common.mjs';

main(async (ctx, opts) => {
  // A session is how LlamaIndex takes a base URL; maxRetries is its default.
  const session = new AnthropicSession({
    apiKey: 'relsim-harness', baseURL: ctx.baseURL, maxRetries: 10, timeout: opts.headerTimeout * 1000,
    fetch: (url, init) => { ctx.progress(); return fetch(url, init); },
  });
  const llm = new Anthropic({ model: 'relsim-mock', maxTokens: 64, session });
  for (let call = 0; call < ctx.calls; call++) {
    try {
      const stream = await llm.chat({ messages: [{ role: 'user', content: 'hello' }], stream: true });
      for await (const chunk of stream) { ctx.progress(); void chunk; }
    } catch (e) {
      if (e?.status === 400) throw new TaskEnd('harness_error', `call ${call}: ${e.message}`.slice(0, 900));
      throw e;
    }
  }
});
