// Many runs of one tester against the shop, each run's page loads meeting
// the faults a plan gives (relsim bughunt run writes the plan and reads the
// verdicts; docs/bughunt.md). One browser for all runs and `workers` runs at
// a time, each worker with one context and page of its own that it resets
// between runs: the run before's routes are removed, their pending handlers
// (a slow fault still waiting) left to fail quietly, and the next run's
// first load navigates the page afresh. The shop keeps no cookies or
// storage and asks for its cart with cache: 'no-store', so a run sees
// nothing of the one before. A fresh context per run would start a renderer
// process per run: about 3 times slower on 2 cores.
// Usage: node runs.mjs PLAN.json
// The plan: {"url": "http://127.0.0.1:PORT/" (with ?v=buggy for the buggy
// version), "tester": "naive"|"careful", "reloads": K, "workers": W,
// "runs": [["ok", "reset", ...], ...]} (what each load of each run meets).
// Prints one JSON line per run as it ends, in any order:
// {"run": I, "verdict": "PASS"|"BUG"|"ENV_ERROR", "loads": L, "evidence": [...]}.
// A run that throws ends the whole program with exit 1 and the error on stderr.
import { readFileSync } from 'node:fs';
import { launch } from './browser.mjs';
import { injectPlan } from './faults.mjs';
import { careful, naive } from './testers.mjs';

if (process.argv.length !== 3) {
  console.error('usage: node runs.mjs PLAN.json');
  process.exit(2);
}
const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const tester = plan.tester === 'naive' ? (page) => naive(page, plan.url) : (page) => careful(page, plan.url, plan.reloads);

const browser = await launch();
let next = 0;
async function worker() {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    while (next < plan.runs.length) {
      const run = next++;
      await page.unrouteAll({ behavior: 'ignoreErrors' });
      await injectPlan(page, plan.runs[run]);
      const { verdict, loads, evidence } = await tester(page);
      process.stdout.write(`${JSON.stringify({ run, verdict, loads, evidence })}\n`);
    }
  } finally {
    await context.close();
  }
}
try {
  await Promise.all(Array.from({ length: Math.max(1, plan.workers | 0) }, worker));
} catch (e) {
  console.error(`runs.mjs: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
