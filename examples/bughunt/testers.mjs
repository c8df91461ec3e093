// The two testing agents of docs/bughunt.md, rule-based and deterministic,
// driving the shop (relsim bughunt serve) in a Playwright page.
// - naive: one load; the page failed to load, or its total differs from the
//   expected one: BUG; else PASS.
// - careful: gathers evidence on each load (the API's status, the request's
//   failure, the total the API's own data gives, the total shown); on a
//   network failure, a 5xx or a timeout it reloads, up to `reloads` times;
//   still failing: ENV_ERROR with the evidence; BUG only when the API
//   answered 200 and the shown total disagrees with its data.
// Each returns {verdict, loads, evidence}.

const EXPECTED_TOTAL = '487.00';  // what the shipped cart must cost
const SETTLE_MS = 5000;           // a load settles well within this: the page gives up at 1 s

// One load of the page: what the page shows and what the network said.
async function load(page, url) {
  const evidence = { api_status: null, failure: null, api_total: null, shown: null, state: null };
  const onResponse = async (response) => {
    if (!response.url().endsWith('/api/cart')) return;
    evidence.api_status = response.status();
    if (response.status() === 200) {
      try {
        const cart = await response.json();
        evidence.api_total = cart.items.reduce((s, i) => s + i.price * i.quantity, 0).toFixed(2);
      } catch (e) {
        evidence.failure = `unreadable body: ${e.message}`;
      }
    }
  };
  const onFailed = (request) => {
    if (request.url().endsWith('/api/cart')) evidence.failure = request.failure()?.errorText ?? 'failed';
  };
  page.on('response', onResponse);
  page.on('requestfailed', onFailed);
  try {
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    const total = page.locator('#total');
    await total.and(page.locator('[data-state="loaded"], [data-state="failed"]')).waitFor({ timeout: SETTLE_MS });
    evidence.state = await total.getAttribute('data-state');
    evidence.shown = (await total.textContent()).trim();
  } finally {
    page.off('response', onResponse);
    page.off('requestfailed', onFailed);
  }
  // A body being read when the page settled: give it a moment to land.
  if (evidence.api_status === 200 && evidence.api_total === null) await page.waitForTimeout(50);
  return evidence;
}

export async function naive(page, url) {
  const e = await load(page, url);
  const bug = e.state !== 'loaded' || e.shown !== EXPECTED_TOTAL;
  return { verdict: bug ? 'BUG' : 'PASS', loads: 1, evidence: [e] };
}

export async function careful(page, url, reloads = 1) {
  const evidence = [];
  for (let attempt = 0; attempt <= reloads; ++attempt) {
    const e = await load(page, url);
    evidence.push(e);
    // The API answered 200 and the page showed a total: judge the total
    // against the API's own data. Anything else (a network failure, a 5xx,
    // the page's timeout) is the environment's: reload.
    if (e.api_status === 200 && e.state === 'loaded')
      return { verdict: e.shown === e.api_total ? 'PASS' : 'BUG', loads: attempt + 1, evidence };
  }
  return { verdict: 'ENV_ERROR', loads: reloads + 1, evidence };
}
