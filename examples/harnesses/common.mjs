// What the three TypeScript harnesses share: options, the task list from
// `relsim serve` (GET /control/tasks), running tasks N at a time, the hang
// watchdog, and reporting each task's outcome (POST /control/tasks/{t}/outcome).
// The loops themselves (sdk_only.mjs, naive_loop.mjs, layered_loop.mjs) are
// only the code a user would write around the SDK; docs/audit.md explains them.
import Anthropic from '@anthropic-ai/sdk';

export { Anthropic };

const USAGE = `usage: node HARNESS.mjs --server http://127.0.0.1:PORT [--concurrency 32]
  [--hang-after SECONDS] [--header-timeout SECONDS] [--idle-timeout SECONDS]
  [--dialect anthropic|openai]   (only a harness that speaks both: ai_sdk_loop.mjs)`;

// --name value pairs; every value a positive number except --server and
// --dialect, the wire to use, one of `dialects` (those the harness speaks).
export function parseArgs(argv = process.argv.slice(2), dialects = ['anthropic']) {
  const opts = { server: null, concurrency: 32, hangAfter: 5, headerTimeout: 1, idleTimeout: 0.5, dialect: 'anthropic' };
  const names = { '--concurrency': 'concurrency', '--hang-after': 'hangAfter',
                  '--header-timeout': 'headerTimeout', '--idle-timeout': 'idleTimeout' };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) usage(`${name} needs a value`);
    if (name === '--server') opts.server = value.replace(/\/+$/, '');
    else if (name === '--dialect') {
      if (!dialects.includes(value)) usage(`--dialect = ${value}: this harness speaks ${dialects.join(' or ')}`);
      opts.dialect = value;
    } else if (names[name]) {
      const v = Number(value);
      if (!(v > 0) || !Number.isFinite(v)) usage(`${name} = ${value} must be a positive number`);
      opts[names[name]] = v;
    } else usage(`unknown option ${name}`);
  }
  if (!opts.server) usage('--server is required');
  opts.concurrency = Math.floor(opts.concurrency);
  return opts;
}

function usage(message) {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

// A task's end as the loop decided it (env_error, harness_error, ...), as
// opposed to an exception that escapes the loop (reported as a crash).
export class TaskEnd extends Error {
  constructor(outcome, detail) {
    super(detail);
    this.outcome = outcome;
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The backoff before the k-th retry (k = 0, 1, ...) of a loop's own layer,
// the formula the SDK uses for its retries and relsim audit checks:
// min(0.5 * 2^k, 8) * (1 - U/4) seconds, U uniform in [0, 1).
export const backoffMs = (k) => Math.min(0.5 * 2 ** k, 8) * (1 - Math.random() / 4) * 1000;

// The request every call sends; the mock ignores everything but "stream".
export const ASK = { model: 'relsim-mock', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

// The SDK client for one task. `timeout` is the SDK's own: it is armed around
// fetch until the response headers arrive, so it is a header timeout (a
// stalled stream is never timed out by the SDK). logLevel off: the SDK logs
// every unparsable SSE line (malformed) on console.error otherwise.
export function makeClient(baseURL, opts, onRequest = () => {}) {
  return new Anthropic({
    apiKey: 'relsim-harness', baseURL, maxRetries: 2, timeout: opts.headerTimeout * 1000, logLevel: 'off',
    fetch: (url, init) => { onRequest(); return fetch(url, init); },
  });
}

async function json(url, init) {
  const reply = await fetch(url, init);
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${reply.status} ${text}`);
  return JSON.parse(text);
}

// How an exception that escaped a loop is reported: a 400 is the caller's own
// bug (harness_error, as every policy has it), anything else a crash.
function escaped(e) {
  if (e instanceof TaskEnd) return { outcome: e.outcome, detail: e.message };
  const detail = `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`.slice(0, 900);
  // Any SDK's API error with status 400 (the Anthropic SDK's, the openai SDK's).
  return { outcome: e?.status === 400 ? 'harness_error' : 'crash', detail };
}

// Runs runTask(ctx) for every task, opts.concurrency at a time. ctx holds
// task, calls, baseURL, progress() (call it on every request and stream
// event) and signal (aborted when the task is abandoned as hung). A task
// with no progress for opts.hangAfter seconds is reported "hang".
// Returns the process exit code: 0 when every task ran and was reported.
export async function runAll(opts, runTask) {
  const list = await json(`${opts.server}/control/tasks`);
  const calls = list.calls ?? 1;
  const queue = [...list.tasks];
  const counts = {};
  let failures = 0;
  const started = Date.now();
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      const end = await runOne(opts, { task: item.task, calls, baseURL: item.base_url }, runTask);
      counts[end.outcome] = (counts[end.outcome] ?? 0) + 1;
      try {
        await json(`${opts.server}/control/tasks/${item.task}/outcome`,
                   { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(end) });
      } catch (e) {
        failures++;
        console.error(`task ${item.task}: reporting ${end.outcome} failed: ${e.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(JSON.stringify({ tasks: list.tasks.length, calls, outcomes: counts, seconds, report_failures: failures }));
  return failures === 0 ? 0 : 1;
}

async function runOne(opts, base, runTask) {
  const abort = new AbortController();
  let last = Date.now();
  let timer;
  const hung = new Promise((resolve) => {
    const check = () => {
      const idle = Date.now() - last;
      if (idle >= opts.hangAfter * 1000) {
        abort.abort();
        resolve({ outcome: 'hang', detail: `no progress for ${opts.hangAfter} s: abandoned` });
      } else timer = setTimeout(check, opts.hangAfter * 1000 - idle);
    };
    timer = setTimeout(check, opts.hangAfter * 1000);
  });
  const ctx = { ...base, signal: abort.signal, progress: () => { last = Date.now(); } };
  const run = runTask(ctx).then(() => ({ outcome: 'done', detail: `${base.calls} calls` }), escaped);
  const end = await Promise.race([run, hung]);
  clearTimeout(timer);
  return end;
}

// One model call through the SDK's stream helper, with progress marked on
// every request the SDK sends and every event it reads. `hooks.onStream`
// gets the MessageStream (the layered loop arms its idle timeout there).
export function streamCall(client, ctx, hooks = {}) {
  const stream = client.messages.stream(ASK, { signal: ctx.signal });
  stream.on('streamEvent', ctx.progress);
  hooks.onStream?.(stream);
  return stream.finalMessage();
}

// Runs `call` ctx.calls times in sequence; each must give the final message.
export async function runCalls(ctx, call) {
  for (let i = 0; i < ctx.calls; i++) {
    const message = await call(i);
    if (message?.stop_reason == null) throw new Error(`call ${i}: no final message`);
  }
}

export async function main(runTask, { dialects } = {}) {
  const opts = parseArgs(process.argv.slice(2), dialects);
  try {
    // exit now: a task abandoned as hung may still hold a socket open
    process.exit(await runAll(opts, (ctx) => runTask(ctx, opts)));
  } catch (e) {
    console.error(`harness: ${e.message}`);
    process.exit(3);
  }
}
