// Environment faults on the shop's /api/cart, injected in the browser with
// Playwright's page.route (the application unchanged):
// - reset: abort the request with connectionreset;
// - 503: fulfil it with a 503;
// - slow: continue it after 2 s, past the page's 1 s timeout;
// - ok (or null): continue it untouched.

const SLOW_MS = 2000;

async function apply(route, fault) {
  try {
    if (fault === 'reset') await route.abort('connectionreset');
    else if (fault === '503') await route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"unavailable"}' });
    else if (fault === 'slow') {
      await new Promise((r) => setTimeout(r, SLOW_MS));
      await route.continue();
    } else await route.continue();
  } catch {
    // The page gave up on the request (its 1 s timeout), or the run's
    // context closed, before the route was done with it.
  }
}

// `fault` on every request to /api/cart ('always'), or on the first only ('once').
export async function inject(page, fault, times) {
  if (!fault) return;
  await page.route('**/api/cart', (route) => apply(route, fault), times === 'once' ? { times: 1 } : undefined);
}

// One fault per request to /api/cart, in order: loads[i] for the i-th
// ('ok' or a fault); requests past the list go through untouched.
export async function injectPlan(page, loads) {
  let next = 0;
  await page.route('**/api/cart', (route) => apply(route, loads[next++] ?? 'ok'));
}
