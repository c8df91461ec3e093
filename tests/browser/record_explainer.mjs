// Records the workbench's explainer to a video: node record_explainer.mjs
// PORT OUT [FPS]. PORT: a running `relsim ui`; OUT: the .mp4 to write
// (written only when the whole recording succeeded); FPS: frames per second,
// a divisor of the page's own 10 (default 10). Progress on stderr when it is
// a terminal. scripts/explainer_video.sh runs it for docs/media/explainer.mp4;
// check_explainer.mjs runs the same code at 2 frames a second.
import { chromium } from 'playwright-core';
import { launch, openExplainer, probe, record } from './explainer_frames.mjs';

const [port, out, fpsArg] = process.argv.slice(2);
if (!port || !out) {
  console.error('usage: node record_explainer.mjs PORT OUT.mp4 [FPS]');
  process.exit(2);
}
const browser = await launch(chromium);
let status = 0;
try {
  const { page, duration, fps: pageFps } = await openExplainer(browser, `http://127.0.0.1:${port}`);
  const fps = fpsArg === undefined ? pageFps : Number(fpsArg);
  if (!Number.isInteger(fps) || fps < 1 || pageFps % fps !== 0) {
    console.error(`record_explainer: FPS = '${fpsArg}' must be a whole divisor of the page's ${pageFps} frames a second`);
    status = 2;
  } else {
    const tty = process.stderr.isTTY;
    const frames = await record(page, out, { duration, fps,
      onFrame: (i, n) => { if (tty && (i % 10 === 0 || i === n)) process.stderr.write(`\rrecord_explainer: frame ${i}/${n}`); } });
    if (tty) process.stderr.write('\n');
    const seen = await probe(out);
    console.log(JSON.stringify({ out, frames, fps, duration, probe: seen }));
  }
} catch (e) {
  console.error(`record_explainer: ${String(e?.message ?? e).split('\n')[0]}`);
  status = 1;
} finally {
  await browser.close();
}
process.exit(status);
