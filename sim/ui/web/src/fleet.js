// The fleet panel: many agents of many tenants sharing one provider
// (`relsim fleet --json --series`, GET /api/fleet), simulated event by
// event. The same scenario runs under each retry throttle side by side:
// goodput and 429s over time (a coordinated start against a quota is a 429
// storm: every agent's retries land in the same seconds), and each
// throttle's success, 429 rate and amplification.

import * as Plot from "@observablehq/plot";
import { getJson } from "./api.js";
import { Panel } from "./panel.js";

export const FIELDS = [
  { key: "agents", kind: "number", min: 1, max: 20000, step: 1, value: "400", hint: "agents, one task each, starting together" },
  { key: "tenants", kind: "number", min: 1, max: 20000, step: 1, value: "1", hint: "tenants (API keys); agent a is tenant a mod tenants" },
  { key: "quota", kind: "number", min: 0.001, max: 1e9, value: "240", hint: "requests per minute per tenant (429 past it)" },
  { key: "p", kind: "number", min: 0, max: 1, value: "0", hint: "long-run fraction of bad requests (faults besides the quota)" },
  { key: "r", kind: "number", min: 0, max: 1000, step: 1, value: "4", hint: "retries per call" },
  { key: "policy", kind: "select", options: ["simple", "naive", "layered", "budgeted"], value: "simple", hint: "the retry policy (docs/policies.md)" },
  { key: "backoff", kind: "text", value: "sdk", hint: "wait before a retry: sdk, none, exp:BASE,CAP,JITTER or list:1,2,4" },
  { key: "duration", kind: "number", min: 1, max: 86400, value: "20", hint: "virtual seconds in which tasks start (the series covers them)" },
  { key: "seed", kind: "number", min: 0, step: 1, value: "20261001", hint: "the same seed, the same run" },
];

// The retry throttles side by side (docs/fleet.md, Retry throttles).
export const THROTTLES = ["none", "grpc:10,0.1", "aws", "budget:0.1"];

const COLUMNS = [["throttle", "throttle"], ["success", "success"], ["rate_429", "429 rate"],
  ["requests", "requests"], ["amplification", "requests per task"]];

export class Fleet extends Panel {
  constructor() {
    super("fleet");
    this.controls = this.controlsIn(FIELDS);
    this.table = this.out("fleet-table");
    this.goodput = this.figure({ name: "fleet-goodput", title: "Goodput over time.",
      text: "Requests served well per second, one line per retry throttle." });
    this.storm = this.figure({ name: "fleet-429", title: "429s over time.",
      text: "Requests the quota refused per second: the storm after a coordinated start, and how each throttle damps it." });
    this.section.querySelector('[data-action="fleet"]').addEventListener("click", () => this.run());
    this.runs = [];
  }

  params(throttle) {
    const v = this.controls.values();
    return { agents: v.agents, tenants: v.tenants, quota: v.quota, p: v.p, r: v.r, policy: v.policy,
      backoff: v.backoff, duration: v.duration, seed: v.seed, throttle };
  }

  run() {
    this.now((signal) => this.simulate(signal));
  }

  async simulate(signal) {
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.error(null);
    this.runs = [];
    this.fillTable();
    this.goodput.clear();
    this.storm.clear();
    this.setText("fleet-summary", "simulating…");
    const results = [];
    try {
      for (const throttle of THROTTLES) results.push({ throttle, ...(await getJson("fleet", this.params(throttle), signal)) });
    } catch (err) {
      this.setText("fleet-summary", "");
      throw err;
    }
    if (signal.aborted) return;
    this.runs = results;
    const none = results[0];
    this.setText("fleet-summary", `${none.tasks} tasks; without a throttle ${none.requests} requests ` +
      `(${none.amplification.toFixed(2)} per task), ${(100 * none.rate_429).toFixed(1)}% of them 429s.`);
    this.fillTable();
    this.draw();
  }

  fillTable() {
    const cell = (run, key) => {
      const v = run[key];
      if (key === "success") return `${(100 * run.success_rate).toFixed(1)}%`;
      if (key === "rate_429") return `${(100 * v).toFixed(1)}%`;
      if (key === "amplification") return v.toFixed(3);
      return String(v);
    };
    this.fillRows(this.table, COLUMNS, this.runs, cell);
  }

  // One row per bin and throttle, as the charts' CSV holds it.
  rows() {
    return this.runs.flatMap((run) => run.series.t.map((t, i) => ({
      throttle: run.throttle, t, goodput: run.series.goodput[i],
      r429: run.series.r429[i] / run.series.bin_seconds / run.replicates,
    })));
  }

  draw() {
    const rows = this.rows();
    const columns = ["throttle", "t", "goodput", "r429"];
    const color = { domain: THROTTLES, range: ["#d55e00", "#0072b2", "#009e73", "#cc79a7"], label: "throttle", legend: false };
    const line = (y, label) => (width) => Plot.plot({
      width, height: 220, marginLeft: 52, color,
      x: { label: "virtual seconds", grid: true },
      y: { label, grid: true, zero: true },
      marks: [Plot.line(rows, { x: "t", y, stroke: "throttle", tip: true }), Plot.ruleY([0])],
    });
    this.goodput.show({ columns, rows }, line("goodput", "good requests per second"));
    this.storm.show({ columns, rows }, line("r429", "429s per second"));
  }
}
