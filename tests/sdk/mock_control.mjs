// What the SDK checks (check_sdk.mjs, check_openai_sdk.mjs) share: relsim
// serve's control API on loopback (a task's script, its log, the retry
// counts its requests sent) and the list of named checks they print.
export function mockControl(port) {
  const base = `http://127.0.0.1:${port}`;
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok: Boolean(ok), detail });
  async function script(task, responses) {
    const r = await fetch(`${base}/control/tasks/${task}/script`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ responses }),
    });
    if (!r.ok) throw new Error(`script ${task}: ${r.status} ${await r.text()}`);
  }
  async function log(task) {
    return (await (await fetch(`${base}/control/tasks/${task}/log`)).json()).requests;
  }
  const retryCounts = async (task) =>
    (await log(task)).map((r) => {
      const h = Array.isArray(r.headers) ? Object.fromEntries(r.headers) : r.headers;
      return h['x-stainless-retry-count'];
    });
  // Prints the checks as one JSON line and exits 0 when every one holds.
  function finish() {
    const ok = checks.every((c) => c.ok);
    console.log(JSON.stringify({ ok, checks }));
    process.exit(ok ? 0 : 1);
  }
  return { base, check, script, log, retryCounts, finish };
}
