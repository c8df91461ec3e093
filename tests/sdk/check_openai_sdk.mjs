// The official OpenAI TypeScript SDK (npm openai) against relsim's mock
// server in the OpenAI dialect, POST /t/{task}/v1/chat/completions
// (tests/sdk/sdk_test.cpp installs the SDK pinned by package-lock.json with
// npm ci and starts `relsim serve`). Every fault kind of the stream and
// before it, and what the SDK makes of it (docs/wire.md, "The OpenAI
// dialect"; its retry rules, read from node_modules/openai/client.js:
// maxRetries 2, 408/409/429/>= 500 or x-should-retry: true, retry-after-ms
// then retry-after when in [0, 60 s], else min(0.5 * 2^k, 8) s times
// (1 - 0.25 U); never once a streaming body has begun).
// Usage: node check_openai_sdk.mjs PORT. Prints one JSON line; exit 0 when every check holds.
import OpenAI from 'openai';

import { mockControl } from './mock_control.mjs';

const { base, check, script, log, retryCounts, finish } = mockControl(process.argv[2]);
const client = (task) => new OpenAI({ apiKey: 'relsim-test', baseURL: `${base}/t/${task}/v1`, maxRetries: 2, timeout: 10000 });
const ask = { model: 'relsim-mock', stream: true, messages: [{ role: 'user', content: 'hello' }] };

// Reads a stream to its end: the text, the last finish_reason, or the error.
async function read(task) {
  let text = '', finish = null, error = null;
  try {
    const stream = await client(task).chat.completions.create(ask);
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
  } catch (e) {
    error = e;
  }
  return { text, finish, error };
}

// A healthy stream: the text, which names its task, and finish_reason stop.
await script(1, ['ok']);
const ok = await read(1);
check('healthy stream gives the text', ok.text === 'Hello from task 1.' && ok.error === null, JSON.stringify(ok.text));
check('healthy stream ends with finish_reason stop', ok.finish === 'stop', ok.finish);

// Persistent 529: three requests with retry counts 0, 1, 2, then an APIError.
await script(2, ['http_529', 'http_529', 'http_529']);
const e529 = (await read(2)).error;
check('persistent 529 raises an APIError with status 529', e529 instanceof OpenAI.APIError && e529.status === 529, String(e529));
check('persistent 529 carries the overloaded code', e529?.code === 'overloaded' && e529?.type === 'server_error', JSON.stringify(e529?.error));
check('persistent 529 sends three requests, retry counts 0 1 2', JSON.stringify(await retryCounts(2)) === '["0","1","2"]', JSON.stringify(await retryCounts(2)));

// A 429 (retry-after 0) and a 500 are retried; the third request streams.
await script(3, ['http_429', 'http_500', 'ok']);
const r3 = await read(3);
check('429 then 500 are retried and the stream arrives', r3.text === 'Hello from task 3.', String(r3.error ?? r3.text));
check('429 then 500 take retry counts 0 1 2', JSON.stringify(await retryCounts(3)) === '["0","1","2"]', JSON.stringify(await retryCounts(3)));

// A 400 is not retried.
await script(4, ['http_400']);
const e400 = (await read(4)).error;
check('400 raises BadRequestError without a retry', e400 instanceof OpenAI.BadRequestError && (await log(4)).length === 1, String(e400));

// An error object inside the stream raises the SDK's APIError; not retried.
await script(5, ['overloaded']);
const e5 = (await read(5)).error;
check('an error chunk in the stream raises', e5 instanceof OpenAI.APIError && /overloaded/i.test(String(e5?.message)), String(e5));
check('an error chunk is not retried', (await log(5)).length === 1, (await log(5)).length);

// A malformed chunk raises (the SDK's SyntaxError).
await script(6, ['malformed']);
const e6 = (await read(6)).error;
check('a malformed chunk raises', e6 instanceof SyntaxError, String(e6));

// A cut stream: the connection ends before [DONE] with no terminating chunk.
await script(7, ['cut']);
const r7 = await read(7);
check('a cut stream raises', r7.error !== null, r7.error ? String(r7.error) : `answered ${JSON.stringify(r7.text)}`);

// No finish_reason (the last chunk missing, [DONE] sent): what the SDK does.
await script(8, ['no_stop']);
const r8 = await read(8);
check('a stream without finish_reason ends without an error and without a finish_reason (a truncated answer accepted)',
  r8.error === null && r8.finish === null && r8.text === 'Hello from task 8.', JSON.stringify({ text: r8.text, finish: r8.finish, error: String(r8.error) }));

// A reset before any byte is a connection error, which the SDK retries.
await script(10, ['reset', 'ok']);
const r10 = await read(10);
check('a reset is retried and the stream arrives', r10.text === 'Hello from task 10.', String(r10.error ?? r10.text));

// A stall after the first chunk: the SDK has no idle timeout of its own (its
// timeout ends with the response's head), so it waits as long as the stream
// stalls; released after 1.5 s, the stream completes.
await script(9, ['stall']);
let settled = false;
const pending = read(9).then((r) => { settled = true; return r; });
await new Promise((resolve) => setTimeout(resolve, 1500));
const waitedThrough = !settled;
await fetch(`${base}/control/tasks/9/release`, { method: 'POST' });
const r9 = await pending;
check('a stall is waited out (no idle timeout), then the stream completes', waitedThrough && r9.text === 'Hello from task 9.',
  JSON.stringify({ waitedThrough, text: r9.text, error: String(r9.error) }));

// Without "stream": one chat.completion, or what its fault leaves of one.
async function whole(task) {
  try {
    return { completion: await client(task).chat.completions.create({ ...ask, stream: false }), error: null };
  } catch (e) {
    return { completion: null, error: e };
  }
}
await script(11, ['ok', 'no_stop', 'malformed', 'overloaded', 'cut']);
const w1 = await whole(11);
check('a whole completion gives the text and finish_reason stop',
  w1.completion?.choices?.[0]?.message?.content === 'Hello from task 11.' && w1.completion?.choices?.[0]?.finish_reason === 'stop',
  JSON.stringify(w1.completion ?? String(w1.error)));
const w2 = await whole(11);
check('a whole completion with finish_reason null is returned as it is (a truncated answer accepted)',
  w2.error === null && w2.completion?.choices?.[0]?.finish_reason === null, JSON.stringify(w2.completion ?? String(w2.error)));
const w3 = await whole(11);
check('a whole body that is not JSON raises', w3.error !== null, String(w3.error ?? JSON.stringify(w3.completion)));
const w4 = await whole(11);
check('a 200 whose body is an error object is returned as if it were a completion (no choices)',
  w4.error === null && w4.completion?.choices === undefined && w4.completion?.error?.code === 'overloaded',
  JSON.stringify(w4.completion ?? String(w4.error)));
const w5 = await whole(11);
check('a whole body cut short raises', w5.error !== null, String(w5.error ?? JSON.stringify(w5.completion)));
check('none of the five whole replies is retried', (await log(11)).length === 5, (await log(11)).length);

// A whole reply held between its head and its body, with the SDK's timeout
// at 1 s: unlike a stream, the body is read inside the timeout, so the
// held reply ends in the SDK's timeout error (waited for, not timed).
await script(12, ['stall']);
const short = new OpenAI({ apiKey: 'relsim-test', baseURL: `${base}/t/12/v1`, maxRetries: 0, timeout: 1000 });
const w12 = await short.chat.completions.create({ ...ask, stream: false })
  .then((c) => ({ completion: c, error: null }), (e) => ({ completion: null, error: e }));
await fetch(`${base}/control/tasks/12/release`, { method: 'POST' });
check('a whole reply stalled after its head ends in the SDK timeout error',
  w12.error instanceof OpenAI.APIConnectionTimeoutError, String(w12.error ?? JSON.stringify(w12.completion)));

// stream_options.include_usage: the SDK's stream gives a last chunk with no
// choices and the usage, after the one with finish_reason stop.
await script(13, ['ok', 'cut']);
async function withUsage(task) {
  const chunks = [];
  let error = null;
  try {
    const stream = await client(task).chat.completions.create({ ...ask, stream_options: { include_usage: true } });
    for await (const chunk of stream) chunks.push(chunk);
  } catch (e) {
    error = e;
  }
  return { chunks, error };
}
const u1 = await withUsage(13);
const last = u1.chunks.at(-1);
check('include_usage: the last chunk has no choices and the usage',
  u1.error === null && last?.choices?.length === 0 && last?.usage?.completion_tokens === 6 &&
    last.usage.total_tokens === last.usage.prompt_tokens + 6 && u1.chunks.at(-2)?.choices?.[0]?.finish_reason === 'stop' &&
    u1.chunks.slice(0, -1).every((c) => c.usage === null),
  JSON.stringify(u1.chunks.slice(-2)) + String(u1.error ?? ''));
const u2 = await withUsage(13);
check('include_usage: a cut stream raises before any usage', u2.error !== null && u2.chunks.every((c) => !c.usage),
  JSON.stringify(u2.chunks.map((c) => c.usage)) + String(u2.error ?? ''));

finish();
