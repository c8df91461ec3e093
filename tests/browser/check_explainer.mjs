// The explainer and its video, checked in Debian's chromium through
// playwright-core (tests/browser/browser_test.cpp starts `relsim ui --port 0`).
// Usage: node check_explainer.mjs PORT OUTDIR SOURCE_DIR
//   OUTDIR receives a fresh recording at 2 frames a second and the frames
//   compared; SOURCE_DIR holds the committed docs/media/explainer.mp4.
// Prints one JSON line {"ok", "steps": [{"name", "ok", "detail"}]}, as
// check_ui.mjs does; exit 0 when every step holds.
//
// What the counters must show comes from outside the explainer's code: the
// simulator's own JSON (GET /api/simulate, the bytes of relsim simulate
// --json) for the same seed, and the reference experiment's 381/400 and
// 310/400 (docs/model.md). The video must be the page: its frame at 30.5 s
// against the page drawn at 30.5 s, and against the page at 34 s, whose
// counters differ.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { extractFrame, frameAt, launch, openExplainer, probe, psnr, record } from './explainer_frames.mjs';
import { stepper } from './harness.mjs';

const [port, outdir, source] = process.argv.slice(2);
if (!port || !outdir || !source) {
  console.error('usage: node check_explainer.mjs PORT OUTDIR SOURCE_DIR');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;
fs.mkdirSync(outdir, { recursive: true });
const committed = path.join(source, 'docs/media/explainer.mp4');
const REFERENCE = { p: 0.3, r: 2, n: 2, seed: 20261001 };
const AT = 30.5;  // scene 3 holds at 400 tasks from 29 s to 32 s
const OTHER = 34;
// A frame of the video against the page at the same time, after H.264 at
// crf 20: measured 41.0 dB (the committed video) and 41.2 dB (a fresh one);
// against the page at 34 s, whose counters and chart differ: 22.7 dB. The
// bounds sit between, with room on both sides.
const SAME_DB = 35;
const DIFFERENT_DB = 32;

const { step, gate, finish } = stepper('check_explainer', 'the explainer did not load (step v1)');

async function api(name, params) {
  const response = await fetch(`${base}/api/${name}?${new URLSearchParams(params)}`);
  if (!response.ok) throw new Error(`GET /api/${name} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

// The counters table as rows of {column: text}.
async function counters(page) {
  return page.locator('[data-testid="explainer-counters"]').evaluate((table) => {
    const keys = [...table.tHead.rows[0].cells].map((c) => c.textContent);
    return [...table.tBodies[0].rows].map((tr) => Object.fromEntries([...tr.cells].map((td, i) => [keys[i], td.textContent])));
  });
}

function expectRow(rows, run, want) {
  const row = rows.find((r) => r.run === run);
  if (!row) throw new Error(`expected a counters row for ${run}, saw ${JSON.stringify(rows)}`);
  for (const [key, value] of Object.entries(want))
    if (row[key] !== String(value)) throw new Error(`expected ${run}'s ${key} to read ${value}, saw ${row[key]}`);
}

const problems = [];
const browser = await launch(chromium);
let page;
let duration;
let fps;
await step('v1. the explainer loads its runs (exp.alone=1 at 1280x720)', async () => {
  gate.open = false;
  // The listeners go on before the page loads: its runs load with it.
  const opening = await openExplainer(browser, base, (p) => {
    p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
    p.on('pageerror', (e) => problems.push(`pageerror: ${String(e?.message ?? e).split('\n')[0]}`));
  });
  ({ page, duration, fps } = opening);
  gate.open = true;
  if (!(duration >= 30)) throw new Error(`expected the explainer to last at least 30 s, saw ${duration}`);
  return `${duration} s at ${fps} frames a second`;
});

await step(`v2. at ${AT} s the counters are the simulator's 400 tasks: 381/400 and 310/400`, async () => {
  const indep = await api('simulate', { ...REFERENCE, q: 0.3, tasks: 400 });
  const bursty = await api('simulate', { ...REFERENCE, q: 0.8, tasks: 400 });
  if (indep.successes !== 381 || bursty.successes !== 310)
    throw new Error(`expected the reference experiment's 381 and 310 from /api/simulate, saw ${indep.successes} and ${bursty.successes}`);
  await frameAt(page, AT);
  const rows = await counters(page);
  expectRow(rows, 'independent', { tasks: 400, done: `${indep.successes}/400`, exact: indep.exact.toFixed(6) });
  expectRow(rows, 'bursty', { tasks: 400, done: `${bursty.successes}/400`, exact: bursty.exact.toFixed(6) });
  return rows.map((r) => `${r.run} ${r.done} (exact ${r.exact})`).join(', ');
});

await step('v3. at the end: 10,000 tasks each, and naive against layered equal to the simulator\'s JSON', async () => {
  const last = (Math.round(duration * fps) - 1) / fps;
  await frameAt(page, last);
  const rows = await counters(page);
  const out = [];
  for (const [run, q] of [['independent', 0.3], ['bursty', 0.8]]) {
    const sim = await api('simulate', { ...REFERENCE, q, tasks: 10000 });
    expectRow(rows, run, { tasks: 10000, done: `${sim.successes}/10000` });
    out.push(`${run} ${sim.successes}/10000`);
  }
  await frameAt(page, 25.9);  // the end of scene 2: all 400 tasks
  const loops = await counters(page);
  for (const policy of ['naive', 'layered']) {
    const sim = await api('simulate', { ...REFERENCE, q: 0.8, tasks: 400, policy, s: 2, kinds: 'slow_headers=1' });
    const env = Object.entries(sim.outcomes).filter(([k]) => k.startsWith('env_error')).reduce((a, [, v]) => a + v, 0);
    expectRow(loops, policy, { tasks: 400, requests: sim.requests, done: sim.successes, 'correct failures': env,
      wrong: sim.wrong });
    out.push(`${policy} ${sim.requests} requests, ${sim.successes} done, ${sim.wrong} wrong`);
  }
  return out.join('; ');
});

await step('v4. keyboard: Space on Play runs the clock, Space again stops it; arrows step the time', async () => {
  await page.addStyleTag({ content: '.explainer-controls { visibility: visible !important; }' });
  const play = page.locator('[data-testid="explainer-play"]');
  const slider = page.locator('[data-testid="explainer-time"]');
  await frameAt(page, 1);
  await play.focus();
  await page.keyboard.press('Space');
  if ((await play.textContent()) !== 'Pause') throw new Error(`expected the button to read Pause after Space, saw ${await play.textContent()}`);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="explainer-time"]').value) >= 1.5,
    null, { timeout: 30000 });
  await page.keyboard.press('Space');
  if ((await play.textContent()) !== 'Play') throw new Error(`expected the button to read Play after a second Space, saw ${await play.textContent()}`);
  const stopped = Number(await slider.inputValue());
  await slider.focus();
  await page.keyboard.press('ArrowRight');
  const stepped = Number(await slider.inputValue());
  if (Math.abs(stepped - stopped - 0.1) > 1e-9) throw new Error(`expected ArrowRight to move ${stopped} to ${stopped + 0.1}, saw ${stepped}`);
  const clock = await page.locator('[data-testid="explainer-clock"]').textContent();
  if (!clock.startsWith(`${stepped.toFixed(1)} s`)) throw new Error(`expected the clock to read ${stepped.toFixed(1)} s, saw ${clock}`);
  await page.addStyleTag({ content: '.explainer-controls { visibility: hidden !important; }' });
  return `played to ${stopped} s, ArrowRight ${stepped} s, clock "${clock}"`;
});

let fresh;
await step('v5. the recorder writes a video that plays: 2 frames a second, ffprobe counts every frame', async () => {
  fresh = path.join(outdir, 'explainer-2fps.mp4');
  fs.rmSync(fresh, { force: true });
  const frames = await record(page, fresh, { duration, fps: 2 });
  const seen = await probe(fresh);
  if (seen.codec !== 'h264' || seen.frames !== frames || Math.abs(seen.duration - duration) > 0.01)
    throw new Error(`expected h264, ${frames} frames, ${duration} s; ffprobe saw ${JSON.stringify(seen)}`);
  return `${seen.frames} frames, ${seen.duration} s, ${seen.width}x${seen.height}`;
});

await step('v6. the committed docs/media/explainer.mp4 plays: h264, 1280x720, every frame of the page', async () => {
  if (!fs.existsSync(committed)) throw new Error(`expected ${committed} (scripts/explainer_video.sh makes it)`);
  const seen = await probe(committed);
  const frames = Math.round(duration * fps);
  if (seen.codec !== 'h264' || seen.width !== 1280 || seen.height !== 720 || seen.frames !== frames ||
      Math.abs(seen.duration - duration) > 0.01)
    throw new Error(`expected h264 1280x720, ${frames} frames, ${duration} s; ffprobe saw ${JSON.stringify(seen)}`);
  return `${seen.frames} frames, ${seen.duration} s, ${(fs.statSync(committed).size / 1e6).toFixed(2)} MB`;
});

await step(`v7. the videos' frame at ${AT} s is the page at ${AT} s (381/400, 310/400), not the page at ${OTHER} s`, async () => {
  const page1 = path.join(outdir, `page-${AT}.png`);
  const page2 = path.join(outdir, `page-${OTHER}.png`);
  fs.writeFileSync(page1, await frameAt(page, AT));
  fs.writeFileSync(page2, await frameAt(page, OTHER));
  const out = [];
  for (const [name, video] of [['committed', committed], ['fresh', fresh]]) {
    const frame = path.join(outdir, `${name}-${AT}.png`);
    await extractFrame(video, AT, frame);
    const same = await psnr(frame, page1);
    const other = await psnr(frame, page2);
    if (!(same >= SAME_DB)) throw new Error(`expected the ${name} video's frame at ${AT} s within ${SAME_DB} dB of the page at ${AT} s, saw ${same} dB (is the video stale? scripts/explainer_video.sh)`);
    if (!(other <= DIFFERENT_DB)) throw new Error(`expected the ${name} video's frame at ${AT} s to differ from the page at ${OTHER} s (below ${DIFFERENT_DB} dB), saw ${other} dB`);
    out.push(`${name}: ${same.toFixed(1)} dB against ${AT} s, ${other.toFixed(1)} dB against ${OTHER} s`);
  }
  return out.join('; ');
});

await step('v8. no console errors or warnings, no page errors', async () => {
  if (problems.length) throw new Error(`expected none, saw ${problems.length}: ${problems.slice(0, 5).join(' | ')}`);
  return 'none';
});

await browser.close();
finish();
