// What the two tool-call harnesses of the lab share (examples/tools/README.md):
// the connection to `relsim tools serve` over the official MCP SDK (Client +
// StreamableHTTPClientTransport), the scripted "model output" (the six tool
// calls of the lab, one per fault group), what each group's fault really is
// (the facts an error could carry), a look at the sandbox before and after a
// call, and the rule that counts the facts a plain error text carries.
// The harnesses themselves (naive.mjs, guarded.mjs) are only the code a user
// would write between a model's tool call and the server; lab.mjs drives them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// 40 characters: the partial_write fault leaves its first 20 in the file.
export const NOTE_TEXT = 'relsim tools lab: forty characters long.';
if (NOTE_TEXT.length !== 40) throw new Error('NOTE_TEXT must be 40 characters');

// The six groups in the order their calls are made. The server's plan for the
// lab is four lines (timeout, exec_error, partial_write, truncate) and counts
// tools/call requests in the order it receives them, so the first four groups
// meet those faults; the last two are mistakes of the model's own (a tool name
// the server does not have, an argument of the wrong type), which the server
// sees as calls 4 and 5 (ok in the plan) only if a harness sends them.
// `truth` is what is really wrong: the facts an error about it could carry.
export const GROUPS = [
  { group: 'transport', call: { name: 'add', arguments: { a: 2, b: 3 } },
    truth: { stage: 'transport', tool: 'add' } },
  { group: 'exec', call: { name: 'add', arguments: { a: 2, b: 3 } },
    truth: { stage: 'exec', tool: 'add' } },
  { group: 'exec_side_effect', call: { name: 'note_write', arguments: { path: 'notes/a.txt', text: NOTE_TEXT } },
    truth: { stage: 'exec', tool: 'note_write' } },
  { group: 'truncation', call: { name: 'dump', arguments: { n: 1000 } },
    truth: { stage: 'truncation', tool: 'dump', expected: '1000', got: '100' } },
  { group: 'service', call: { name: 'note_writer', arguments: { path: 'notes/b.txt', text: NOTE_TEXT } },
    truth: { stage: 'service', tool: 'note_writer' } },
  { group: 'validate', call: { name: 'add', arguments: { a: '2', b: 3 } },
    truth: { stage: 'validate', tool: 'add', parameter: 'a', expected: 'integer', got: 'string' } },
];

// The facts a plain error text carries, for a harness that parses nothing:
// a fact of the group's truth counts only when its value itself appears in the
// text as a whole word (case-sensitive; "add" in "add failed: ..." would count, "a"
// inside "a tool" would count too, which is why nothing is inferred beyond it:
// no stage from an error code, no parameter from a position). Honest and
// simple: it can only over-count, never read meaning into a message.
export function literalFacts(text, truth) {
  const facts = {};
  if (typeof text !== 'string' || text === '') return facts;
  for (const [key, value] of Object.entries(truth)) {
    const escaped = String(value).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (new RegExp(`(^|[^A-Za-z0-9_])${escaped}($|[^A-Za-z0-9_])`).test(text)) facts[key] = value;
  }
  return facts;
}

// Every file under `dir` (relative path -> content); {} when there is no dir.
export function snapshot(dir) {
  const files = {};
  if (!dir) return files;
  const walk = (rel) => {
    let entries;
    try { entries = readdirSync(join(dir, rel), { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files[p] = readFileSync(join(dir, p), 'utf8');
    }
  };
  walk('');
  return files;
}

// Whether `after` holds a file that is new or changed since `before`.
export function changed(before, after) {
  return Object.keys(after).some((p) => before[p] !== after[p]);
}

// The text of a tools/call result's content (its text parts joined).
export function resultText(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// An error's message as it reached the code (verbatim).
export function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

// Connects a Client to the server's /mcp. The transport's fetch is wrapped to
// count the HTTP exchanges still in flight, so that the lab can wait for the
// answers a harness gave up on (a held `timeout` answer) before it closes:
// the server logs a call when it answers it, and the lab's log should be whole.
export async function connect(url, name) {
  const inflight = new Set();
  const trackedFetch = (input, init) => {
    const p = fetch(input, init);
    const settled = p.then(() => {}, () => {});
    inflight.add(settled);
    settled.then(() => inflight.delete(settled));
    return p;
  };
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: trackedFetch });
  await client.connect(transport);
  // Waits until no exchange is in flight, or `ms` have passed; true when none is.
  const drain = async (ms) => {
    let timer, expired = false;
    const deadline = new Promise((r) => { timer = setTimeout(() => { expired = true; r(); }, ms); });
    while (inflight.size > 0 && !expired) await Promise.race([Promise.all([...inflight]), deadline]);
    clearTimeout(timer);
    return inflight.size === 0;
  };
  return { client, drain };
}

