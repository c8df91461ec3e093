// Tasks of tool calls (examples/tools/README.md, "Tasks"): one harness,
// naive.mjs or guarded.mjs, runs --tasks tasks of --steps note_write calls
// each against `relsim tools serve`, whose faults are drawn from the chain
// (--p, --seed: the same faults call for call on every run, the calls being
// made one at a time). A task ends at the first call its harness reports as
// failed; a result accepted as good lets it go on. Prints one JSON line per
// call made, the lines `relsim tools audit --server-log` reads to give each
// task's class (docs/tools.md, "Tasks"):
//   {"harness", "task", "step", "tool", "arguments", "sent", "caught_stage",
//    "reported", "error", "rollback", "result_accepted", "result_chars",
//    "side_effect_left": null}
// Usage: node tasks.mjs --url http://127.0.0.1:PORT/mcp --harness naive|guarded
//          --tasks T --steps N [--budget-ms 1000] [--sandbox DIR] [--journal DIR]
// (--sandbox: the server's sandbox, required by guarded for its undo journal).
// Exit 0 when every task ran, 1 on a failure of the driver, 2 on bad usage.
import { NOTE_TEXT } from './harness.mjs';
import { openHarness, parseOptions } from './driver.mjs';

const USAGE = `usage: node tasks.mjs --url http://127.0.0.1:PORT/mcp --harness naive|guarded --tasks T --steps N
  [--budget-ms 1000] [--sandbox DIR] [--journal DIR] [--drain-ms 10000]`;

const opts = parseOptions(process.argv.slice(2), USAGE, {
  '--tasks': { key: 'tasks', lo: 1, hi: 100000 },
  '--steps': { key: 'steps', lo: 1, hi: 1000 },
});
try {
  const { client, drain, harness } = await openHarness(opts, `relsim-tools-tasks-${opts.harness}`);
  for (let task = 0; task < opts.tasks; ++task) {
    for (let step = 0; step < opts.steps; ++step) {
      const call = { name: 'note_write', arguments: { path: `tasks/${task}/${step}.txt`, text: NOTE_TEXT } };
      const outcome = await harness.call(call);
      console.log(JSON.stringify({
        harness: opts.harness, task, step, tool: call.name, arguments: call.arguments, sent: outcome.sent,
        caught_stage: outcome.stage, reported: outcome.error !== null, error: outcome.error,
        rollback: outcome.rollback, result_accepted: outcome.accepted,
        result_chars: typeof outcome.text === 'string' ? outcome.text.length : null, side_effect_left: null,
      }));
      if (outcome.error !== null) break;  // the task ends at a reported failure
    }
  }
  if (!(await drain(opts.drainMs))) console.error(`tasks: answers still in flight after ${opts.drainMs} ms`);
  await client.close();
} catch (error) {
  console.error(`tasks: ${error instanceof Error ? error.stack : error}`);
  process.exit(1);
}
