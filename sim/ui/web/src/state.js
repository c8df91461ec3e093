// The page's state lives in the query string, so that a copied address
// reproduces the view: every control of every panel, under the panel's
// prefix (bursts: none, so ?p=0.3&q=0.8; lab.fault, pol.s, audit.policy).
// history.replaceState keeps it current without filling the back button.

const panels = [];

// Registers a panel's controls under its prefix and gives them the values
// the address carries.
export function restore(prefix, controls) {
  panels.push({ prefix, controls });
  const query = new URLSearchParams(window.location.search);
  for (const key of controls.keys ? controls.keys() : Object.keys(controls.state())) {
    const value = query.get(prefix + key);
    if (value !== null) controls.set(key, value);
  }
  controls.refreshVisibility();
}

// Writes every registered control's value into the address.
export function save() {
  const query = new URLSearchParams();
  for (const { prefix, controls } of panels) {
    for (const [key, value] of Object.entries(controls.state())) query.set(prefix + key, value);
  }
  const url = `${window.location.pathname}?${query.toString()}${window.location.hash}`;
  window.history.replaceState(null, "", url);
}
