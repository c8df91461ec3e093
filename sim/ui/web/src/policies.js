// The policies panel: the bursts panel's model under naive, layered and
// budgeted retries, each outcome's exact probability as a stacked bar.

import * as Plot from "@observablehq/plot";
import { getJson } from "./api.js";
import { outcomeClass, outcomeScale } from "./colors.js";
import { prob6 } from "./format.js";
import { Panel } from "./panel.js";

export const FIELDS = [
  { key: "s", kind: "number", min: 0, max: 100, step: 1, value: "2", hint: "HTTP-layer (SDK) retries" },
  { key: "B", kind: "number", min: 1, max: 10000, step: 1, value: "3", hint: "budgeted: requests per call" },
];

const POLICIES = ["naive", "layered", "budgeted"];

export class Policies extends Panel {
  constructor() {
    super("policies");
    this.controls = this.controlsIn(FIELDS);
    this.chart = this.figure({ name: "policies",
      title: "Outcomes by policy.",
      text: "Each bar is one policy; its segments are the exact probabilities of the task's outcomes " +
        "(a segment per fault kind, hover for the kind)." });
    this.model = null;
  }

  // The bursts panel's model, or null while it is invalid.
  setModel(model) {
    this.model = model;
    this.changed();
  }

  changed() {
    this.debounce((signal) => this.compute(signal));
  }

  async compute(signal) {
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    if (!this.model) {
      this.error(null);
      this.chart.clear("Waiting for a valid model in the bursts panel.");
      return;
    }
    this.error(null);
    const v = this.controls.values();
    const results = await Promise.all(POLICIES.map((policy) => getJson("exact",
      { ...this.model, policy, s: v.s, B: policy === "budgeted" ? v.B : undefined }, signal)));
    if (signal.aborted) return;
    const rows = [];
    results.forEach((result, i) => {
      for (const [key, probability] of Object.entries(result.outcomes)) {
        const colon = key.indexOf(":");
        rows.push({ policy: POLICIES[i], outcome: outcomeClass(key), kind: colon < 0 ? "" : key.slice(colon + 1),
          probability });
      }
    });
    this.draw(rows);
    this.out("policies-summary").textContent = results.map((r, i) =>
      `${POLICIES[i]}: success ${prob6(r.success)}, ${r.mean_requests.toFixed(3)} requests per task`).join(" · ");
  }

  draw(rows) {
    const color = outcomeScale(rows.map((r) => r.outcome));
    const order = color.domain;
    rows.sort((a, b) => POLICIES.indexOf(a.policy) - POLICIES.indexOf(b.policy) ||
      order.indexOf(a.outcome) - order.indexOf(b.outcome) || a.kind.localeCompare(b.kind));
    this.chart.show({ columns: ["policy", "outcome", "kind", "probability"], rows }, (width) => Plot.plot({
      width, height: 260, marginLeft: 48,
      x: { label: "policy", domain: POLICIES },
      y: { label: "probability", grid: true, domain: [0, 1] },
      color: { ...color, label: "outcome" },
      marks: [
        Plot.barY(rows, { x: "policy", y: "probability", fill: "outcome", stroke: "white", strokeWidth: 0.5,
          order: null, tip: true,
          title: (r) => `${r.policy}: ${r.outcome}${r.kind ? ` (${r.kind})` : ""} ${prob6(r.probability)}` }),
        Plot.ruleY([0]),
      ],
    }));
  }
}
