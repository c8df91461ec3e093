// The shop's page script (docs/bughunt.md): it fetches the cart from
// /api/cart with a 1 s timeout and computes the total itself. With ?v=buggy
// it forgets the quantity (the product bug). A load that fails (a network
// error, a status other than 200, the timeout) shows that loading failed.
// #total's data-state says which: "loaded" or "failed".
const TIMEOUT_MS = 1000;
const buggy = new URLSearchParams(location.search).get('v') === 'buggy';
const total = document.getElementById('total');
const rows = document.querySelector('#cart tbody');

function show(state, text) {
  total.dataset.state = state;
  total.textContent = text;
}

async function load() {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
  try {
    const response = await fetch('/api/cart', { signal: abort.signal, cache: 'no-store' });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    const cart = await response.json();
    let sum = 0;
    for (const item of cart.items) {
      const tr = document.createElement('tr');
      for (const v of [item.name, item.price.toFixed(2), String(item.quantity)]) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.append(td);
      }
      rows.append(tr);
      sum += buggy ? item.price : item.price * item.quantity;
    }
    show('loaded', sum.toFixed(2));
  } catch (e) {
    show('failed', `loading failed: ${e.name === 'AbortError' ? 'timed out' : e.message}`);
  } finally {
    clearTimeout(timer);
  }
}

load();
