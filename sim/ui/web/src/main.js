// relsim workbench: the page that `relsim ui` serves (docs/ui.md).
//
// Plain ES modules, no framework: the explainer (explainer.js) and nine panels (bursts.js, lab.js,
// policies.js, seconds.js, audit.js, fit.js, tune.js, fleet.js, trend.js), each a table of controls (controls.js) whose
// values live in the address (state.js) and go to the server's JSON API
// (api.js); charts sit in figure.js's frame, which exports them (export.js).
// The build (sim/CMakeLists.txt) bundles this file with esbuild after
// `npm ci` and compiles the bundle into relsim, so the page works offline.
//
// Why Observable Plot for every chart: it is declarative (a chart is a list
// of marks over the data, a few lines each, so no hand-written drawing) and
// renders SVG, so the SVG export is the element itself and the charts are
// in the DOM, where the browser tests and screen readers can see them. It is
// maintained by Observable (the makers of D3) and ISC-licensed. Vega-Lite
// was the other declarative choice, but its bundle is several times larger
// and brings its own runtime (whose expressions need a separate interpreter
// under our CSP, which forbids eval); uPlot is small and fast but
// draws on a canvas only (no SVG to export or inspect) and has no stacked
// bars, which the policies panel needs.

import { Audit } from "./audit.js";
import { Bursts } from "./bursts.js";
import { Explainer } from "./explainer.js";
import { Fit } from "./fit.js";
import { Fleet } from "./fleet.js";
import { Lab } from "./lab.js";
import { Policies } from "./policies.js";
import { Seconds } from "./seconds.js";
import { restore, save } from "./state.js";
import { Trend } from "./trend.js";
import { Tune } from "./tune.js";

function start() {
  const policies = new Policies();
  const bursts = new Bursts((model) => policies.setModel(model));
  const lab = new Lab();
  const seconds = new Seconds();
  const audit = new Audit();
  // The fit's p and q go to the bursts panel, in steps mode, and into the address.
  const fit = new Fit((p, q) => {
    bursts.controls.set("mode", "steps");
    bursts.controls.set("p", p);
    bursts.controls.set("q", q);
    bursts.controls.refreshVisibility();
    save();
    bursts.changed();
  });
  const tune = new Tune();
  const fleet = new Fleet();
  const trend = new Trend();
  const explainer = new Explainer();

  restore("", bursts.controls);
  restore("lab.", lab.controls);
  restore("pol.", policies.controls);
  restore("sec.", seconds.controls);
  restore("audit.", audit.controls);
  restore("audit.", audit.filters);
  restore("fit.", fit.controls);
  restore("tune.", tune.controls);
  restore("fleet.", fleet.controls);
  restore("trend.", trend.controls);
  restore("exp.", explainer.controls);
  save();

  // Every change is kept in the address at once; the panel recomputes once
  // the controls settle (Panel.debounce).
  bursts.controls.onChange(() => { save(); bursts.changed(); });
  lab.controls.onChange(() => { save(); lab.changed(); });
  policies.controls.onChange(() => { save(); policies.changed(); });
  seconds.controls.onChange(() => { save(); seconds.changed(); });
  audit.controls.onChange(() => save());
  audit.filters.onChange(() => save());
  fit.controls.onChange(() => save());
  tune.controls.onChange(() => save());
  fleet.controls.onChange(() => save());
  trend.controls.onChange(() => save());
  explainer.onSettle = () => save();

  bursts.now((signal) => bursts.compute(signal));
  lab.now((signal) => lab.oracle(signal));
  seconds.now((signal) => seconds.compute(signal));
  audit.fillTable();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
