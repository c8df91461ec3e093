// The official openai SDK alone, in the OpenAI dialect (POST
// /t/{task}/v1/chat/completions): maxRetries 2, the SDK's timeout as a header
// timeout, no loop of its own. Each model call is
// client.chat.completions.create({stream: true}) read to its end, the text
// taken as the answer, as most of its users write it: nothing checks
// finish_reason. Whatever it raises escapes the task (common.mjs reports it
// as "crash", a 400 as "harness_error"), and a stalled stream (the SDK has no
// idle timeout) is abandoned by the watchdog after --hang-after seconds and
// reported "hang". relsim audit infers: naive, s = 2, r = 0 (a naive loop
// takes a stream without its end as the answer, as this one does).
//
//   node openai_sdk_only.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--hang-after 4] [--header-timeout 1]
import OpenAI from 'openai';

import { main } from './common.mjs';

const ASK = { model: 'relsim-mock', stream: true, messages: [{ role: 'user', content: 'hello' }] };

main(async (ctx, opts) => {
  const client = new OpenAI({
    apiKey: 'relsim-harness', baseURL: `${ctx.baseURL}/v1`, maxRetries: 2, timeout: opts.headerTimeout * 1000,
    logLevel: 'off', fetch: (url, init) => { ctx.progress(); return fetch(url, init); },
  });
  for (let i = 0; i < ctx.calls; i++) {
    const stream = await client.chat.completions.create(ASK, { signal: ctx.signal });
    let text = '';
    for await (const chunk of stream) {
      ctx.progress();
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    if (text === '') throw new Error(`call ${i}: no answer`);
  }
});
