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
import { GROUPS, changed, literalFacts, snapshot } from './harness.mjs';
import { openHarness, parseOptions } from './driver.mjs';

const USAGE = `usage: node lab.mjs --url http://127.0.0.1:PORT/mcp --harness naive|guarded
  [--budget-ms 1000] [--sandbox DIR] [--journal DIR] [--drain-ms 10000]`;

const opts = parseOptions(process.argv.slice(2), USAGE);
try {
  const { client, drain, harness } = await openHarness(opts, `relsim-tools-lab-${opts.harness}`);
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
