// What the browser checks share (check_ui.mjs, check_explainer.mjs and the
// explainer's recorder): Debian's chromium launched off the network, and
// named steps that end in one JSON verdict.
// A fresh profile (launch makes one in a temp dir); every flag that keeps
// chromium off the network, and every name but loopback unresolvable, with a
// dead proxy for anything that is not loopback. RELSIM_CHROMIUM overrides
// /usr/bin/chromium; playwright-core downloads no browser.
export async function launch(chromium, extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.RELSIM_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-domain-reliability', '--no-pings',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
      '--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>;127.0.0.1;localhost',
      ...extraArgs,
    ],
  });
}

// Named steps: step(name, fn) runs fn and keeps {name, ok, detail} (fn's
// value, or the first line of what it threw), also printed to stderr as it
// ends, so that a run killed by a timeout still shows how far it got. Once
// gate.open is false (the page did not open), the remaining steps are
// listed as not run instead of each waiting. finish() prints the verdict
// line {"ok", "steps"} and exits 0 when every step held.
export function stepper(tag, notRun) {
  const steps = [];
  const gate = { open: true };
  async function step(name, fn) {
    let result;
    if (!gate.open) result = { name, ok: false, detail: `not run: ${notRun}` };
    else {
      try {
        result = { name, ok: true, detail: (await fn()) ?? '' };
      } catch (e) {
        result = { name, ok: false, detail: String(e?.message ?? e).split('\n')[0] };
      }
    }
    steps.push(result);
    console.error(`${tag}: ${result.ok ? 'ok  ' : 'FAIL'} ${name}: ${result.detail}`);
  }
  function finish() {
    const ok = steps.every((s) => s.ok);
    console.log(JSON.stringify({ ok, steps }));
    process.exit(ok ? 0 : 1);
  }
  return { step, gate, finish };
}
