// The chapter's seven scenarios (docs/bughunt.md) in a real browser:
// Debian's chromium driven by playwright-core, the faults injected with
// page.route on /api/cart (faults.mjs: reset, 503, slow), once (times: 1) or
// always.
// Usage: node scenarios.mjs PORT   (relsim bughunt serve --port PORT)
// RELSIM_CHROMIUM overrides /usr/bin/chromium. Prints one JSON line:
// {"rows": [{"name", "version", "fault", "times", "naive", "careful", "careful_loads"}]}.
import { launch } from './browser.mjs';
import { inject } from './faults.mjs';
import { careful, naive } from './testers.mjs';

const port = process.argv[2];
if (!port) {
  console.error('usage: node scenarios.mjs PORT');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}/`;

export const SCENARIOS = [
  { name: 'healthy', version: 'healthy', fault: null, times: null },
  { name: 'product bug', version: 'buggy', fault: null, times: null },
  { name: 'reset always', version: 'healthy', fault: 'reset', times: 'always' },
  { name: '503 always', version: 'healthy', fault: '503', times: 'always' },
  { name: 'slow always', version: 'healthy', fault: 'slow', times: 'always' },
  { name: 'reset once', version: 'healthy', fault: 'reset', times: 'once' },
  { name: 'product bug + reset once', version: 'buggy', fault: 'reset', times: 'once' },
];

const browser = await launch();
const rows = [];
try {
  for (const s of SCENARIOS) {
    const url = s.version === 'buggy' ? `${base}?v=buggy` : base;
    const verdicts = {};
    for (const [name, tester] of [['naive', (p) => naive(p, url)], ['careful', (p) => careful(p, url, 1)]]) {
      const context = await browser.newContext();  // a fresh context per run: its own routes, cache and cookies
      const page = await context.newPage();
      await inject(page, s.fault, s.times);
      verdicts[name] = await tester(page);
      await context.close();
    }
    rows.push({ name: s.name, version: s.version, fault: s.fault, times: s.times, naive: verdicts.naive.verdict,
                careful: verdicts.careful.verdict, careful_loads: verdicts.careful.loads,
                careful_evidence: verdicts.careful.evidence });
    console.error(`scenarios: ${s.name}: naive ${verdicts.naive.verdict}, careful ${verdicts.careful.verdict} in ${verdicts.careful.loads}`);
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify({ rows }));
