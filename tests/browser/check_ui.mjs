// The workbench (`relsim ui`) in a real browser: Debian's chromium, headless,
// driven by playwright-core (tests/browser/browser_test.cpp installs it with
// npm ci and starts `relsim ui --port 0`; scripts/screenshots.sh runs it for
// docs/img/).
// Usage: node check_ui.mjs PORT OUTDIR [SOURCE_DIR]
//   OUTDIR receives the screenshots; SOURCE_DIR (else RELSIM_SOURCE_DIR) is
//   the repository, for data/audit/. RELSIM_CHROMIUM overrides /usr/bin/chromium.
// Prints one JSON line {"ok", "steps": [{"name", "ok", "detail"}]}; exit 0
// when every step holds. Steps wait by polling for a value (up to 30 s, 90 s
// for a live run): they check what the page shows, never how fast.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const [port, outdir, sourceArg] = process.argv.slice(2);
const source = sourceArg || process.env.RELSIM_SOURCE_DIR;
if (!port || !outdir || !source) {
  console.error('usage: node check_ui.mjs PORT OUTDIR [SOURCE_DIR] (or RELSIM_SOURCE_DIR)');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;
const WAIT = 30000;
const LIVE_WAIT = 90000;
fs.mkdirSync(outdir, { recursive: true });

// Each step's result also goes to stderr as it ends, so a run killed by the
// wrapper's timeout still shows how far it got. Once the page has failed to
// open, the other steps are listed as not run instead of each waiting.
const steps = [];
let pageOpened = true;
async function step(name, fn) {
  let result;
  if (!pageOpened) result = { name, ok: false, detail: 'not run: the page did not open (step a)' };
  else {
    try {
      result = { name, ok: true, detail: (await fn()) ?? '' };
    } catch (e) {
      result = { name, ok: false, detail: String(e?.message ?? e).split('\n')[0] };
    }
  }
  steps.push(result);
  console.error(`check_ui: ${result.ok ? 'ok  ' : 'FAIL'} ${name}: ${result.detail}`);
}

// Polls get() until accept(value) holds; else fails naming what was
// expected and the last value seen.
async function poll(what, get, accept, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  let seen;
  for (;;) {
    try {
      seen = await get();
    } catch (e) {
      seen = `(${String(e?.message ?? e).split('\n')[0]})`;
    }
    if (accept(seen)) return seen;
    if (Date.now() > deadline) throw new Error(`${what}: saw ${JSON.stringify(seen)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const text = (loc) => loc.first().textContent({ timeout: 1000 }).then((t) => (t ?? '').trim());
const expectText = (scope, id, want, timeout) =>
  poll(`expected ${id} to show ${JSON.stringify(want)}`, () => text(scope.getByTestId(id)), (t) => t === want, timeout);

// Controls by section and accessible name (the contract's option names).
const spin = (scope, name) => scope.getByRole('spinbutton', { name, exact: true });
const slider = (scope, name) => scope.getByRole('slider', { name, exact: true });
const select = (scope, name) => scope.getByRole('combobox', { name, exact: true });
async function setNumber(scope, name, value) {
  const loc = spin(scope, name);
  await loc.fill(String(value), { timeout: WAIT });
  await loc.dispatchEvent('change');
}
async function choose(scope, name, value) {
  await select(scope, name).selectOption(value, { timeout: WAIT });
}

// The mark groups of a chart's Plot svg (Plot labels each mark's <g> with its
// type; axes, grids and the frame are not data marks), with their shapes.
async function marks(figure) {
  return figure.evaluate((fig) => {
    const counts = {};
    for (const shape of fig.querySelectorAll('svg rect, svg path, svg circle, svg line, svg text')) {
      const group = shape.closest('g[aria-label]');
      const label = group?.getAttribute('aria-label') ?? '';
      if (!label || /axis|grid|frame|legend/.test(label)) continue;
      const key = `${label}:${shape.tagName.toLowerCase()}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  });
}
const total = (counts, tag) => Object.entries(counts).filter(([k]) => k.endsWith(`:${tag}`)).reduce((a, [, v]) => a + v, 0);
const shapes = (counts) => ['rect', 'path', 'circle', 'line'].reduce((a, t) => a + total(counts, t), 0);

// Rows of a table that hold data (a colspan placeholder row saying "no rows"
// does not count) and are rendered.
const rows = (table) =>
  table.evaluate((t) =>
    [...t.querySelectorAll('tr')].filter((r) => {
      const cells = r.querySelectorAll('td');
      if (cells.length === 0 || (cells.length === 1 && cells[0].colSpan > 1)) return false;
      return r.getClientRects().length > 0;
    }).length,
  );

// Every console error or warning, page error and request beyond 127.0.0.1, per
// page; `expected` marks a window where the page is given bad input on purpose.
const problems = [];
const allowed = [];
const offsite = [];
let expectingBadInput = false;
function watch(page) {
  page.on('console', (m) => {
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    const entry = `${m.type()}: ${m.text()}`;
    // Chromium logs every 4xx answer to fetch as a network error; the bad-input
    // step asks for exactly one such answer.
    if (expectingBadInput && /status of 400/.test(m.text())) allowed.push(entry);
    else problems.push(entry);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${String(e?.message ?? e).split('\n')[0]}`));
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (/^(data|blob):$/.test(url.protocol)) return;
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') offsite.push(r.url());
  });
}

// A fresh profile (launch makes one in a temp dir); every flag that keeps
// chromium off the network, and every name but loopback unresolvable, with a
// dead proxy for anything that is not loopback.
const browser = await chromium.launch({
  executablePath: process.env.RELSIM_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-domain-reliability', '--no-pings',
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
    '--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>;127.0.0.1;localhost',
  ],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
context.setDefaultTimeout(WAIT);
const page = await context.newPage();
watch(page);
const bursts = page.locator('#bursts');
const lab = page.locator('#lab');
const policies = page.locator('#policies');
const audit = page.locator('#audit');
const trend = page.locator('#trend');
const SECTIONS = ['bursts', 'lab', 'policies', 'audit', 'trend'];

await step('a. page opens with its five sections', async () => {
  pageOpened = false;
  const response = await page.goto(`${base}/`, { waitUntil: 'load' });
  if (response?.status() !== 200) throw new Error(`expected GET / to answer 200, saw ${response?.status()}`);
  pageOpened = true;
  const missing = [];
  for (const id of SECTIONS) {
    if ((await page.locator(`section#${id}`).count()) !== 1) missing.push(id);
    else if (!(await page.locator(`section#${id}`).getByRole('heading').count())) missing.push(`${id} heading`);
  }
  if (missing.length) {
    pageOpened = missing.length < SECTIONS.length;
    throw new Error(`expected sections ${SECTIONS.join(', ')} with headings; missing: ${missing.join(', ')}`);
  }
  return `title ${JSON.stringify(await page.title())}`;
});

await step('b1. bursts: q 0.8 gives exact 0.763675, simulated 310/400 in [0.7316, 0.8132]', async () => {
  await setNumber(bursts, 'p', 0.3);
  await setNumber(bursts, 'r', 2);
  await setNumber(bursts, 'n', 2);
  await setNumber(bursts, 'tasks', 400);
  await setNumber(bursts, 'seed', 20261001);
  await setNumber(bursts, 'q', 0.8);
  await expectText(bursts, 'exact', '0.763675');
  await expectText(bursts, 'simulated', '310/400');
  await expectText(bursts, 'interval', '[0.7316, 0.8132]');
  return 'exact 0.763675, 310/400, [0.7316, 0.8132]';
});

await step('b2. bursts: q 0.3 gives exact = formula = 0.946729', async () => {
  await setNumber(bursts, 'q', 0.3);
  await expectText(bursts, 'exact', '0.946729');
  await expectText(bursts, 'formula', '0.946729');
  return 'exact 0.946729, formula 0.946729';
});

await step('b3. bursts: ArrowRight on the q slider moves q and the exact value', async () => {
  await expectText(bursts, 'exact', '0.946729');
  const before = Number(await spin(bursts, 'q').inputValue());
  await slider(bursts, 'q').focus({ timeout: WAIT });
  await page.keyboard.press('ArrowRight');
  const after = await poll(
    `expected the q spinbutton to rise above ${before} after ArrowRight on the q slider`,
    async () => Number(await spin(bursts, 'q').inputValue()),
    (v) => v > before && v <= 1,
  );
  const exact = await poll(
    `expected exact to leave 0.946729 after q moved to ${after}`,
    () => text(bursts.getByTestId('exact')),
    (t) => /^\d\.\d{6}$/.test(t) && t !== '0.946729',
  );
  const focused = await slider(bursts, 'q').evaluate((el) => el === document.activeElement);
  if (!focused) throw new Error('expected the q slider to keep the focus after ArrowRight, saw focus elsewhere');
  return `q ${before} -> ${after}, exact ${exact}`;
});

await step('b4. bursts: charts chart-success-q and chart-requests draw marks', async () => {
  const out = [];
  for (const id of ['chart-success-q', 'chart-requests']) {
    const counts = await poll(`expected ${id} to hold an svg with data marks`, () => marks(bursts.getByTestId(id)), (c) => shapes(c) > 0);
    out.push(`${id} ${JSON.stringify(counts)}`);
  }
  return out.join('; ');
});

// One live run of the lab's current settings: the oracle's requests first,
// then the run's, its outcome against the oracle's, and one bar per request.
async function labRun(policy, requests) {
  await choose(lab, 'fault', 'slow_headers');
  await choose(lab, 'times', 'always');
  await choose(lab, 'policy', policy);
  await expectText(lab, 'oracle-requests', String(requests));
  await lab.getByRole('button', { name: 'run live', exact: true }).click({ timeout: WAIT });
  await expectText(lab, 'live-requests', String(requests), LIVE_WAIT);
  const oracle = await text(lab.getByTestId('oracle-outcome'));
  await expectText(lab, 'live-outcome', oracle);
  await poll(
    'expected live-status to say it agrees with the oracle',
    () => text(lab.getByTestId('live-status')),
    (t) => /agrees/.test(t) && !/differs/.test(t),
  );
  const counts = await poll(
    `expected chart-timeline to draw ${requests} bars (rect marks)`,
    () => marks(lab.getByTestId('chart-timeline')),
    (c) => total(c, 'rect') === requests,
  );
  return `${policy}: ${requests} requests, outcome ${oracle}, timeline ${JSON.stringify(counts)}`;
}

await step('c1. lab: naive + slow_headers + always, oracle 9 and a live run of 9 that agrees', () => labRun('naive', 9));
await step('c2. lab: layered + slow_headers + always, oracle 3 and a live run of 3 that agrees', () => labRun('layered', 3));

await step('d. policies: chart-policies has bars for naive, layered, budgeted', async () => {
  const chart = policies.getByTestId('chart-policies');
  const words = await poll(
    'expected chart-policies to name naive, layered and budgeted in its svg',
    () => chart.evaluate((f) => [...f.querySelectorAll('svg text')].map((t) => t.textContent).join(' ')),
    (t) => ['naive', 'layered', 'budgeted'].every((w) => t.includes(w)),
  );
  const counts = await poll('expected chart-policies to draw bars (rect marks)', () => marks(chart), (c) => total(c, 'rect') > 0);
  return `${JSON.stringify(counts)}; text: ${words.slice(0, 120)}`;
});

await step('e. audit: plan + naive log give 5 rows; a mismatch verdict filter gives 0', async () => {
  await audit.getByLabel('plan', { exact: true }).setInputFiles(path.join(source, 'data/audit/plan.jsonl'));
  await audit.getByLabel('log', { exact: true }).setInputFiles(path.join(source, 'data/audit/naive_log.jsonl'));
  await choose(audit, 'policy', 'naive');
  await audit.getByRole('button', { name: 'audit', exact: true }).click({ timeout: WAIT });
  const table = audit.getByTestId('audit-table');
  await poll('expected audit-table to show 5 rows', () => rows(table), (n) => n === 5);
  const options = await select(audit, 'verdict').evaluate((s) => [...s.options].map((o) => o.value));
  const mismatch = options.find((v) => v !== 'all' && v !== 'ok' && v !== '');
  if (!options.includes('ok') || !mismatch) throw new Error(`expected verdict options all, ok and a mismatch one, saw ${JSON.stringify(options)}`);
  await choose(audit, 'verdict', 'ok');
  await poll('expected verdict ok to keep 5 rows (every verdict in this data is ok)', () => rows(table), (n) => n === 5);
  await choose(audit, 'verdict', mismatch);
  await poll(`expected verdict ${mismatch} to show 0 rows`, () => rows(table), (n) => n === 0);
  await choose(audit, 'verdict', options.includes('all') ? 'all' : options[0]);
  await poll('expected verdict all to show the 5 rows again', () => rows(table), (n) => n === 5);
  return `5 rows; options ${JSON.stringify(options)}; ${mismatch} -> 0`;
});

// The history file's numbers, read here from the file itself (not through
// relsim), against the trend panel's table; the four charts draw marks.
await step('e2. trend: the notebook\'s history file gives 8 rows whose numbers are the file\'s', async () => {
  const file = path.join(source, 'data/notebooks/contention_history.jsonl');
  const runs = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  await trend.getByLabel('history', { exact: true }).setInputFiles(file);
  await trend.getByRole('button', { name: 'draw', exact: true }).click({ timeout: WAIT });
  const table = trend.getByTestId('trend-table');
  await poll(`expected trend-table to show ${runs.length} rows`, () => rows(table), (n) => n === runs.length);
  const shown = await table.evaluate((t) =>
    [...t.tBodies[0].rows].map((r) => Object.fromEntries([...r.cells].map((c) => [c.dataset.key, c.textContent]))));
  runs.forEach((j, i) => {
    const burst = j.scenario === 'mixed' ? j.by_scenario.burst.tool_429_rate : j.tool_429_rate;
    const want = { run: String(i + 1), agent: j.agent, success: j.success.value.toFixed(4), burst_429: burst.value.toFixed(4),
      leak: j.wrong_tenant_hit_rate.value.toFixed(4), pool_wait_p99: j.pool_wait_p99.toFixed(3) };
    for (const [key, value] of Object.entries(want))
      if (shown[i][key] !== value) throw new Error(`expected run ${i + 1}'s ${key} to show ${value}, saw ${shown[i][key]}`);
  });
  const drawn = [];
  for (const id of ['chart-trend-success', 'chart-trend-burst-429', 'chart-trend-leak', 'chart-trend-pool-wait']) {
    const counts = await poll(`expected ${id} to draw a dot a run`, () => marks(trend.getByTestId(id)), (c) => total(c, 'circle') === runs.length);
    drawn.push(`${id} ${total(counts, 'circle')} dots`);
  }
  const summary = await text(trend.getByTestId('trend-summary'));
  return `${runs.length} rows equal to the file; ${drawn.join(', ')}; ${summary.slice(0, 100)}`;
});

await step('f. URL state: q 0.8 and lab policy layered survive opening the URL in a new page', async () => {
  await setNumber(bursts, 'q', 0.8);
  await choose(lab, 'policy', 'layered');
  await expectText(bursts, 'exact', '0.763675');
  await expectText(lab, 'oracle-requests', '3');
  const url = await poll(
    'expected the URL to carry q=0.8 and lab.policy=layered',
    () => page.url(),
    (u) => {
      const q = new URL(u).searchParams;
      return Number(q.get('q')) === 0.8 && q.get('lab.policy') === 'layered';
    },
  );
  const second = await context.newPage();
  watch(second);
  try {
    await second.goto(url, { waitUntil: 'load' });
    const b2 = second.locator('#bursts');
    const l2 = second.locator('#lab');
    await poll('expected the q spinbutton to be 0.8', async () => Number(await spin(b2, 'q').inputValue()), (v) => v === 0.8);
    await expectText(b2, 'exact', '0.763675');
    await poll('expected the lab policy to be layered', () => select(l2, 'policy').inputValue(), (v) => v === 'layered');
    await expectText(l2, 'oracle-requests', '3');
  } finally {
    await second.close();
  }
  return url.slice(base.length);
});

// One export button of a chart: the download, its name and its bytes.
async function download(figure, button) {
  const [dl] = await Promise.all([
    page.waitForEvent('download', { timeout: WAIT }),
    figure.getByRole('button', { name: button, exact: true }).click({ timeout: WAIT }),
  ]);
  const file = await dl.path();
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(file) };
}

await step('g. exports of chart-success-q: CSV, SVG and PNG', async () => {
  const figure = bursts.getByTestId('chart-success-q');
  const csv = await download(figure, 'CSV');
  const header = csv.bytes.toString('utf8').split(/\r?\n/)[0];
  const columns = header.split(',').map((c) => c.trim().replace(/^"|"$/g, ''));
  if (!columns.includes('q')) throw new Error(`expected the CSV's header row to have a column q, saw ${JSON.stringify(header)} (${csv.name})`);
  const svg = await download(figure, 'SVG');
  const svgText = svg.bytes.toString('utf8').trimStart();
  if (!/^(<\?xml[^>]*\?>\s*)?<svg[\s>]/.test(svgText))
    throw new Error(`expected the SVG download to start with <svg, saw ${JSON.stringify(svgText.slice(0, 40))} (${svg.name})`);
  const png = await download(figure, 'PNG');
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (png.bytes.length < 8 || !png.bytes.subarray(0, 8).equals(signature))
    throw new Error(`expected the PNG download to start with the PNG signature, saw ${png.bytes.subarray(0, 8).toString('hex')} (${png.name})`);
  return `${csv.name} header ${JSON.stringify(header)}; ${svg.name} ${svg.bytes.length} B; ${png.name} ${png.bytes.length} B`;
});

await step('i. bad input: p 1.2 shows an error naming 1.2 in #bursts; p 0.3 clears it', async () => {
  const error = bursts.locator('[data-testid=error]');
  expectingBadInput = true;
  let shown;
  try {
    await setNumber(bursts, 'p', 1.2);
    shown = await poll(
      'expected a visible [data-testid=error] in #bursts mentioning 1.2',
      async () => ((await error.first().isVisible()) ? text(error) : '(not visible)'),
      (t) => t.includes('1.2'),
    );
  } finally {
    expectingBadInput = false;
  }
  await setNumber(bursts, 'p', 0.3);
  await poll(
    'expected the error to clear after p went back to 0.3',
    async () => ((await error.count()) && (await error.first().isVisible()) ? text(error) : ''),
    (t) => t === '',
  );
  await setNumber(bursts, 'q', 0.8);
  await expectText(bursts, 'exact', '0.763675');
  return `error: ${shown}`;
});

await step('j1. screenshots of each section at 1280x800 (lab after naive live run)', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  // The screenshots are taken whatever the run shows: they help read a failure.
  let failure = null;
  const summary = await labRun('naive', 9).catch((e) => {
    failure = e;
  });
  for (const id of SECTIONS)
    await page.locator(`#${id}`).screenshot({ path: path.join(outdir, `ui-${id}.png`), timeout: WAIT });
  if (failure) throw failure;
  return `${SECTIONS.map((id) => `ui-${id}.png`).join(' ')} in ${outdir}; ${summary}`;
});

// Width checks poll: charts may redraw for the new width after a resize.
async function noHorizontalScroll(width) {
  await page.setViewportSize({ width, height: 800 });
  const seen = await poll(
    `expected no horizontal scroll at ${width}x800 (scrollWidth <= clientWidth + 1)`,
    () => page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]),
    ([scroll, client]) => scroll <= client + 1,
    10000,
  );
  return `${width}: scrollWidth ${seen[0]}, clientWidth ${seen[1]}`;
}

await step('h1. layout at 390x800: no horizontal scroll; full-page screenshot', async () => {
  const detail = await noHorizontalScroll(390);
  await page.screenshot({ path: path.join(outdir, 'ui-narrow.png'), fullPage: true });
  return `${detail}; ui-narrow.png`;
});
await step('h2. layout at 1280x800: no horizontal scroll', () => noHorizontalScroll(1280));

await step('k. nothing reached beyond 127.0.0.1', async () => {
  if (offsite.length) throw new Error(`expected requests to 127.0.0.1 only, saw ${offsite.slice(0, 5).join(', ')}`);
  return 'every request went to 127.0.0.1';
});
await step('a2. no console errors or warnings, no page errors, in the whole run', async () => {
  if (problems.length) throw new Error(`expected none, saw ${problems.length}: ${problems.slice(0, 5).join(' | ')}`);
  return allowed.length ? `none (bad-input step's expected: ${allowed.join(' | ')})` : 'none';
});

await context.close();
await browser.close();
const ok = steps.every((s) => s.ok);
console.log(JSON.stringify({ ok, steps }));
process.exit(ok ? 0 : 1);
