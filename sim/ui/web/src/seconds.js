// The seconds panel: time mode complete (docs/time.md). Outages of mean
// t-bad seconds every t-good seconds on average, requests and faults that
// take seconds, a policy and its backoff: the exact success, the mean wall
// time of all tasks and of the done ones, and the wall-time distribution
// (`relsim exact --json`, exact for fixed waits), with the seeded
// simulation's quantiles and their intervals beside (`relsim simulate
// --json`), which also covers jittered backoffs.

import * as Plot from "@observablehq/plot";
import { getJson } from "./api.js";
import { outcomeScale } from "./colors.js";
import { prob6 } from "./format.js";
import { Panel } from "./panel.js";

const budgeted = (v) => v.policy === "budgeted";
const retrying = (v) => v.policy !== "simple";

export const FIELDS = [
  { key: "t-good", kind: "number", min: 0.001, max: 1e9, value: "3600", hint: "mean seconds between outages" },
  { key: "t-bad", kind: "number", min: 0.001, max: 1e9, value: "120", hint: "mean length of an outage, seconds" },
  { key: "n", kind: "number", min: 1, max: 100000, step: 1, value: "20", hint: "model calls per task" },
  { key: "r", kind: "number", min: 0, max: 1000, step: 1, value: "2", hint: "stream-layer retries per call" },
  { key: "policy", kind: "select", options: ["simple", "naive", "layered", "budgeted"], value: "layered",
    hint: "the retry policy (docs/policies.md)" },
  { key: "s", kind: "number", min: 0, max: 100, step: 1, value: "2", hint: "HTTP-layer (SDK) retries", when: retrying },
  { key: "B", kind: "number", min: 1, max: 10000, step: 1, value: "3", hint: "budgeted: requests per call", when: budgeted },
  { key: "kinds", kind: "text", value: "http_529=1", hint: "fault kinds of bad requests, e.g. http_529=1 or cut=1,stall=1" },
  { key: "request-seconds", kind: "number", min: 0, max: 1e9, value: "10", hint: "seconds a request takes" },
  { key: "fault-seconds", kind: "text", value: "", hint: "a fault's own seconds, KIND=SECONDS,... or timeouts (others take request-seconds)" },
  { key: "think-seconds", kind: "number", min: 0, max: 1e9, value: "0", hint: "seconds from a call's answer to the next call" },
  { key: "backoff", kind: "text", value: "list:1,2,4", hint: "wait before a retry: sdk, none, exp:BASE,CAP,JITTER or list:1,2,4 (fixed waits: exact wall time)" },
  { key: "retry-after", kind: "number", min: 0, max: 60, value: "0", hint: "an http_429's retry-after, honoured in (0, 60) s" },
  { key: "tasks", kind: "number", min: 1, max: 1000000, step: 1, value: "20000", hint: "tasks to simulate" },
  { key: "seed", kind: "number", min: 0, step: 1, value: "20261001", hint: "simulation seed" },
];

export class Seconds extends Panel {
  constructor() {
    super("seconds");
    this.controls = this.controlsIn(FIELDS);
    this.chart = this.figure({ name: "seconds", title: "Wall time of a task.",
      text: "The exact probability that a task ends after so many seconds (a dot a point, log scale, down to 1e-12), by how it ends (fixed waits only: a jittered backoff has no exact distribution, and the simulation's quantiles stand in)." });
  }

  model() {
    const v = this.controls.values();
    const out = { "t-good": v["t-good"], "t-bad": v["t-bad"], n: v.n, r: v.r, policy: v.policy,
      kinds: v.kinds || undefined, "request-seconds": v["request-seconds"],
      "fault-seconds": v["fault-seconds"] || undefined, "think-seconds": v["think-seconds"], backoff: v.backoff,
      "retry-after": v["retry-after"] };
    if (retrying(v)) out.s = v.s;
    if (budgeted(v)) out.B = v.B;
    return out;
  }

  changed() {
    this.debounce((signal) => this.compute(signal));
  }

  async compute(signal) {
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.error(null);
    const v = this.controls.values();
    const [exact, sim] = await Promise.all([getJson("exact", this.model(), signal),
      getJson("simulate", { ...this.model(), tasks: v.tasks, seed: v.seed }, signal)]);
    if (signal.aborted) return;
    this.setText("seconds-success", prob6(exact.success));
    this.setText("seconds-mean", `${exact.mean_seconds.toFixed(2)} s`);
    this.setText("seconds-mean-done", exact.mean_seconds_done === null ? "–" : `${exact.mean_seconds_done.toFixed(2)} s`);
    // An interval's end is null where it is unbounded (too few tasks).
    const end = (x, digits) => (x === null || x === undefined ? "∞" : x.toFixed(digits));
    const q = exact.seconds_quantiles;
    const simQ = sim.seconds_quantiles, simCi = sim.seconds_quantiles_ci;
    this.setText("seconds-p99", q ? `${q.p99} s (exact)`
      : simQ ? `${end(simQ.p99, 1)} s [${end(simCi?.p99?.[0], 1)}, ${end(simCi?.p99?.[1], 1)}] (simulated)` : "–");
    const ci = sim.mean_seconds_ci ?? [null, null];
    this.setText("seconds-simulated", `${sim.successes}/${sim.tasks} done, mean ${end(sim.mean_seconds, 2)} s ` +
      `[${end(ci[0], 2)}, ${end(ci[1], 2)}]` +
      (sim.mean_seconds_covered ? ": covers the exact mean" : ": misses the exact mean"));
    this.draw(exact);
  }

  draw(exact) {
    const rows = (exact.seconds ?? []).filter((r) => r.probability >= 1e-12);
    if (rows.length === 0) {
      this.chart.clear(exact.seconds_quantiles_note || "No exact wall-time distribution for this backoff: see the simulated p99.");
      return;
    }
    // A log scale: the usual wall time holds most of the mass, the tail
    // that retries add lies decades below it.
    this.chart.show({ columns: ["seconds", "outcome", "probability"], rows }, (width) => Plot.plot({
      width, height: 240, marginLeft: 56,
      x: { label: "seconds", grid: true },
      y: { label: "probability (log scale)", type: "log", grid: true, tickFormat: ".0e" },
      color: { ...outcomeScale(rows.map((r) => r.outcome)), label: "outcome" },
      marks: [Plot.dot(rows, { x: "seconds", y: "probability", fill: "outcome", r: 2.5, tip: true,
        title: (r) => `${r.seconds} s, ${r.outcome}: ${r.probability.toPrecision(4)}` })],
    }));
  }
}
