// The tool-call fault lab's driver (examples/tools/README.md): connects to
// `relsim tools serve` with the official MCP SDK and makes the six calls of
// harness.mjs's GROUPS through one harness, naive.mjs or guarded.mjs, then
// prints one JSON line per group:
//   {"group", "harness", "caught_stage" (the stage the harness caught it at,
//    or null), "reported" (an error reached the caller), "error" (its text),
//    "facts" (what the error carries: the guarded harness's own structured
//    facts; for the naive one, those of the group's truth whose value appears
//    literally in its error text, harness.mjs literalFacts), "side_effect_left"
//    (a failed call left new or changed content in the sandbox; null without
//    --sandbox), "rollback" ("done" | "none" | "failed"), "result_accepted"
//    (a result passed on as good), "tool" and "arguments" (the call the
//    model wrote), "sent" (the call went to the server), "result_chars" (the
//    length of the result text the harness got, null when none)}
// `relsim tools audit --log` reads these lines (docs/tools.md).
// A truncated result is caught_stage "truncation" (the guarded harness passes
// it on marked truncated, not accepted). Before closing, the lab waits up to
// --drain-ms for answers a harness gave up on, so the server's log is whole.
// Usage: node lab.mjs --url http://127.0.0.1:PORT/mcp --harness naive|guarded
//          [--budget-ms 1000] [--sandbox DIR] [--journal DIR] [--drain-ms 10000]
// (--sandbox: the server's sandbox, required by guarded for its undo journal;
// --journal: where the undo records go, default a new folder under the
// system's temp folder). Exit 0 when all six groups ran, 1 on a failure of
// the lab itself, 2 on bad usage.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GROUPS, changed, connect, literalFacts, snapshot } from './harness.mjs';
import { guarded } from './guarded.mjs';
import { naive } from './naive.mjs';

const USAGE = `usage: node lab.mjs --url http://127.0.0.1:PORT/mcp --harness naive|guarded
  [--budget-ms 1000] [--sandbox DIR] [--journal DIR] [--drain-ms 10000]`;

function usage(message) {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { url: null, harness: null, budgetMs: 1000, sandbox: null, journal: null, drainMs: 10000 };
  const names = { '--url': 'url', '--harness': 'harness', '--budget-ms': 'budgetMs', '--sandbox': 'sandbox',
                  '--journal': 'journal', '--drain-ms': 'drainMs' };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (!names[name]) usage(`unknown option ${name}`);
    if (value === undefined) usage(`${name} needs a value`);
    opts[names[name]] = value;
  }
  if (!opts.url) usage('--url is required');
  if (opts.harness !== 'naive' && opts.harness !== 'guarded') usage('--harness must be naive or guarded');
  for (const key of ['budgetMs', 'drainMs']) {
    const v = Number(opts[key]);
    if (!(v >= 0) || !Number.isFinite(v)) usage(`${key} = ${opts[key]} must be a number >= 0`);
    opts[key] = v;
  }
  if (opts.harness === 'guarded' && !opts.sandbox) usage('--harness guarded needs --sandbox (its undo journal)');
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
try {
  const { client, drain } = await connect(opts.url, `relsim-tools-lab-${opts.harness}`);
  const harness = opts.harness === 'naive'
    ? naive(client, { budgetMs: opts.budgetMs })
    : await guarded(client, { budgetMs: opts.budgetMs, sandbox: opts.sandbox,
                              journal: opts.journal ?? mkdtempSync(join(tmpdir(), 'relsim-tools-journal-')) });
  for (const { group, call, truth } of GROUPS) {
    const before = snapshot(opts.sandbox);
    const outcome = await harness.call(call);
    const after = snapshot(opts.sandbox);
    console.log(JSON.stringify({
      group,
      harness: opts.harness,
      caught_stage: outcome.stage,
      reported: outcome.error !== null,
      error: outcome.error,
      facts: outcome.facts ?? literalFacts(outcome.error, truth),
      side_effect_left: opts.sandbox ? !outcome.accepted && changed(before, after) : null,
      rollback: outcome.rollback,
      result_accepted: outcome.accepted,
      tool: call.name,
      arguments: call.arguments,
      sent: outcome.sent,
      result_chars: typeof outcome.text === 'string' ? outcome.text.length : null,
    }));
  }
  if (!(await drain(opts.drainMs))) console.error(`lab: answers still in flight after ${opts.drainMs} ms`);
  await client.close();
} catch (error) {
  console.error(`lab: ${error instanceof Error ? error.stack : error}`);
  process.exit(1);
}
