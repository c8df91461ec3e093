// The official Anthropic TypeScript SDK against relsim's mock server
// (tests/sdk/sdk_test.cpp installs the SDK pinned by package-lock.json with npm ci
// and starts `relsim serve`).
// Usage: node check_sdk.mjs PORT. Prints one JSON line; exit 0 when every check holds.
import Anthropic from '@anthropic-ai/sdk';

import { mockControl } from './mock_control.mjs';

const { base, check, script, retryCounts, finish } = mockControl(process.argv[2]);
const client = (task) => new Anthropic({ apiKey: 'relsim-test', baseURL: `${base}/t/${task}`, maxRetries: 2, timeout: 10000 });
const ask = { model: 'relsim-mock', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

// A healthy stream yields the final text, which names its task.
await script(1, ['ok']);
const message = await client(1).messages.stream(ask).finalMessage();
check('healthy stream gives the final text', message.content[0]?.text === 'Hello from task 1.', message.content[0]?.text);

// Persistent 529: three requests with retry counts 0, 1, 2, then the overloaded error.
await script(2, ['http_529', 'http_529', 'http_529']);
let err529 = null;
try {
  await client(2).messages.stream(ask).finalMessage();
} catch (e) {
  err529 = e;
}
const counts = await retryCounts(2);
check('persistent 529 raises an APIError with status 529', err529 instanceof Anthropic.APIError && err529.status === 529, String(err529));
check('persistent 529 is the overloaded error', err529?.error?.error?.type === 'overloaded_error', JSON.stringify(err529?.error));
check('persistent 529 sends three requests, retry counts 0 1 2', JSON.stringify(counts) === '["0","1","2"]', JSON.stringify(counts));

// An in-stream `event: error` surfaces as the SDK's error.
await script(3, ['overloaded']);
let errEvent = null;
try {
  await client(3).messages.stream(ask).finalMessage();
} catch (e) {
  errEvent = e;
}
check('event: error in the stream raises', errEvent !== null && /overloaded/i.test(String(errEvent?.message ?? errEvent)), String(errEvent));

// A cut stream surfaces as an error, never as an answer.
await script(4, ['cut']);
let errCut = null, cutText = null;
try {
  cutText = (await client(4).messages.stream(ask).finalMessage()).content[0]?.text;
} catch (e) {
  errCut = e;
}
check('a cut stream raises', errCut !== null, errCut ? String(errCut) : `answered ${cutText}`);

finish();
