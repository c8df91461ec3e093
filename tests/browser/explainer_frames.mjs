// The explainer's frames (sim/ui/web/src/explainer.js), shared by the
// video's recorder (record_explainer.mjs, run by scripts/explainer_video.sh)
// and its check (check_explainer.mjs), so that a frame of the video and the
// page at the same time are drawn the same way.
//
// The page alone (exp.alone=1) at 1280x720, its play bar hidden; a frame is
// the page after the time slider moved to t, which redraws synchronously
// (render(t) is a pure function of t). Stepping the slider instead of
// filming the page as it plays makes every frame exact whatever the
// machine's speed: a noisy 2-core machine drops none.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { launch as launchChromium } from './harness.mjs';

export const WIDTH = 1280;
export const HEIGHT = 720;

// Debian's chromium off the network (harness.mjs), without scroll bars.
export const launch = (chromium) => launchChromium(chromium, ['--hide-scrollbars', '--font-render-hinting=none']);

// Opens the explainer alone and waits until its runs have loaded; returns
// {page, duration, fps} (the slider's max and step). onPage(page) runs
// before the page loads (to listen to its console from the start).
export async function openExplainer(browser, base, onPage = () => {}) {
  const page = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT }, deviceScaleFactor: 1 });
  onPage(page);
  await page.goto(`${base}/?exp.alone=1`, { waitUntil: 'load' });
  await page.addStyleTag({ content: '.explainer-controls { visibility: hidden; }' });
  const stage = page.locator('[data-testid="explainer-stage"]');
  await page.waitForFunction(() => {
    const state = document.querySelector('[data-testid="explainer-stage"]')?.dataset.state;
    if (state === 'failed') throw new Error(document.querySelector('#explainer [data-testid="error"]')?.textContent);
    return state === 'ready';
  }, null, { timeout: 60000 });
  const slider = page.locator('[data-testid="explainer-time"]');
  const duration = Number(await slider.getAttribute('max'));
  const fps = Math.round(1 / Number(await slider.getAttribute('step')));
  return { page, stage, duration, fps };
}

// The page at time t (seconds), as a PNG.
export async function frameAt(page, t) {
  await page.locator('[data-testid="explainer-time"]').evaluate((el, value) => {
    el.value = String(value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, t);
  return page.screenshot({ type: 'png' });
}

// Runs a program to its end; resolves to its stdout and stderr, rejects
// naming its exit code and the end of its stderr.
export function runProgram(program, args, input = null) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ out, err })
      : reject(new Error(`${program} exited ${code}: ${err.trim().split('\n').slice(-2).join(' | ')}`))));
    if (input !== null) child.stdin.end(input);
  });
}

// Records the explainer to an MP4 (H.264, yuv420p: plays in browsers and on
// GitHub) with Debian's ffmpeg: every frame i / fps for i < duration * fps,
// as PNGs on ffmpeg's stdin. Writes OUT only when ffmpeg succeeded (a
// temporary file beside it, renamed). onFrame(i, n) reports progress.
export async function record(page, out, { duration, fps, onFrame = () => {} }) {
  const frames = Math.round(duration * fps);
  const partial = `${out}.partial.mp4`;
  const ffmpeg = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'image2pipe', '-c:v', 'png',
    '-framerate', String(fps), '-i', '-', '-c:v', 'libx264', '-preset', 'slow', '-crf', '20', '-pix_fmt', 'yuv420p',
    '-threads', '2', '-movflags', '+faststart', '-an', partial], { stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  ffmpeg.stderr.on('data', (d) => { err += d; });
  // Settles when ffmpeg ends (its exit code) or cannot start (a rejection);
  // a write to an ffmpeg that has died fails on stdin, not in the process.
  const closed = new Promise((resolve, reject) => {
    ffmpeg.on('error', reject);
    ffmpeg.on('close', resolve);
  });
  closed.catch(() => {});
  let broken = null;
  ffmpeg.stdin.on('error', (e) => { broken = e; });
  const fail = async (why) => {
    ffmpeg.kill('SIGKILL');
    await closed.catch(() => {});
    fs.rmSync(partial, { force: true });
    throw why;
  };
  try {
    for (let i = 0; i < frames; i++) {
      const png = await frameAt(page, i / fps);
      if (broken) break;
      if (!ffmpeg.stdin.write(png)) await Promise.race([new Promise((r) => ffmpeg.stdin.once('drain', r)), closed]);
      onFrame(i + 1, frames);
    }
  } catch (e) {
    await fail(e);
  }
  ffmpeg.stdin.end();
  let code;
  try {
    code = await closed;
  } catch (e) {
    await fail(new Error(`ffmpeg did not start: ${e.message}`));
  }
  if (code !== 0 || broken) {
    fs.rmSync(partial, { force: true });
    throw new Error(`ffmpeg exited ${code}: ${err.trim().split('\n').slice(-2).join(' | ') || broken?.message}`);
  }
  fs.renameSync(partial, out);
  return frames;
}

// ffprobe's view of a video: codec, size, duration (s) and frames counted
// by decoding them all.
export async function probe(file) {
  const { out } = await runProgram('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_frames',
    '-show_entries', 'stream=codec_name,width,height,nb_read_frames,avg_frame_rate:format=duration', '-of', 'json', file]);
  const json = JSON.parse(out);
  const stream = json.streams?.[0] ?? {};
  return { codec: stream.codec_name, width: stream.width, height: stream.height,
    frames: Number(stream.nb_read_frames), rate: stream.avg_frame_rate, duration: Number(json.format?.duration) };
}

// The video's frame at t seconds, as a PNG file.
export async function extractFrame(video, t, png) {
  await runProgram('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-ss', String(t), '-i', video,
    '-frames:v', '1', png]);
}

// The PSNR of two images of one size, in dB (ffmpeg's psnr filter; inf for
// identical images is returned as 100).
export async function psnr(a, b) {
  const { err } = await runProgram('ffmpeg', ['-hide_banner', '-i', a, '-i', b, '-lavfi', 'psnr', '-f', 'null', '-']);
  const m = /average:(inf|[0-9.]+)/.exec(err);
  if (!m) throw new Error(`ffmpeg's psnr printed no average: ${err.trim().split('\n').slice(-1)[0]}`);
  return m[1] === 'inf' ? 100 : Number(m[1]);
}
