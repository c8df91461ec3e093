// The bursts panel: the independent formula, the exact success, a seeded
// simulation with its Wilson interval (streamed, cancelled when a control
// moves), success against q (or, in seconds mode, against the outage
// length) and the requests per task by outcome.

import * as Plot from "@observablehq/plot";
import { getJson, getText, stream } from "./api.js";
import { outcomeScale } from "./colors.js";
import { interval4, parseCsv, prob6 } from "./format.js";
import { Panel } from "./panel.js";

const steps = (v) => v.mode !== "seconds";
const seconds = (v) => v.mode === "seconds";

export const FIELDS = [
  { key: "p", kind: "range", min: 0, max: 1, slider: { min: 0, max: 1, step: 0.01 }, value: "0.3",
    hint: "long-run fraction of bad requests", when: steps },
  { key: "q", kind: "range", min: 0, max: 1, slider: { min: 0, max: 1, step: 0.01 }, value: "0.3",
    hint: "P(bad | previous bad): how sticky a burst is", when: steps },
  { key: "r", kind: "range", min: 0, max: 1000, step: 1, slider: { min: 0, max: 10 }, value: "2",
    hint: "retries per call" },
  { key: "n", kind: "range", min: 1, max: 100000000, step: 1, slider: { min: 1, max: 20 }, value: "2",
    hint: "model calls per task" },
  { key: "b", kind: "range", min: 0, max: 1000, step: 1, slider: { min: 0, max: 10 }, value: "0",
    hint: "silent chain steps before a retry (a backoff)", when: steps },
  { key: "g", kind: "range", min: 0, max: 1000, step: 1, slider: { min: 0, max: 10 }, value: "0",
    hint: "silent chain steps before the next call", when: steps },
  { key: "chain", kind: "select", options: ["fresh", "continuous"], value: "fresh",
    hint: "a fresh chain per task, or one chain running on across tasks" },
  { key: "mode", kind: "select", options: ["steps", "seconds"], value: "steps",
    hint: "steps: a chain over requests; seconds: outages in time" },
  { key: "t-good", kind: "number", min: 0.001, max: 1e9, value: "10",
    hint: "mean seconds between outages", when: seconds },
  { key: "t-bad", kind: "number", min: 0.001, max: 1e9, value: "2",
    hint: "mean length of an outage, seconds", when: seconds },
  { key: "request-seconds", kind: "number", min: 0, max: 1e9, value: "1",
    hint: "seconds a request takes", when: seconds },
  { key: "think-seconds", kind: "number", min: 0, max: 1e9, value: "0",
    hint: "seconds from a call's answer to the next call", when: seconds },
  { key: "backoff", kind: "text", value: "sdk",
    hint: "wait before a retry: sdk, none, exp:BASE,CAP,JITTER or list:1,2,4", when: seconds },
  { key: "tasks", kind: "number", min: 1, max: 10000000, step: 1, value: "400",
    hint: "tasks to simulate" },
  { key: "seed", kind: "number", min: 0, step: 1, value: "20261001",
    hint: "simulation seed: the same seed, the same tasks" },
];

const CAPTIONS = {
  steps: { title: "Success against q.",
    text: "The exact probability that a task finishes as bursts get stickier (q from 0 to 1, p fixed), " +
      "the independent formula as the dashed line, and the current point (with the simulation's interval)." },
  seconds: { title: "Success against the outage length.",
    text: "The exact probability that a task finishes as outages get longer (t-bad, t-good fixed), " +
      "the independent formula for the same p = t-bad / (t-good + t-bad) dashed, and the current point." },
};

// p <= 1/2 leaves q free; above, the chain needs p0 = p(1-q)/(1-p) <= 1.
// Checked here so that a slider's intermediate position asks nothing the
// server would refuse (the message is the CLI's).
function qError(p, q) {
  if (!(p > 0.5) || p >= 1) return null;
  const low = (2 * p - 1) / p;
  if (q >= low - 1e-12) return null;
  return `q = ${q} is out of range for p = ${p}: q must be in [${low.toPrecision(6)}, 1] ` +
    "so that p0 = p(1-q)/(1-p) <= 1";
}

export class Bursts extends Panel {
  constructor(onModel) {
    super("bursts");
    this.controls = this.controlsIn(FIELDS);
    this.successChart = this.figure({ name: "success-q", ...CAPTIONS.steps });
    this.requestsChart = this.figure({ name: "requests", title: "Requests per task.",
      text: "How many requests a task sends, and how it ends, with their exact probabilities." });
    this.progress = this.out("sim-progress");
    this.onModel = onModel;
    this.closeStream = null;
    this.sim = null;
    this.lastModel = undefined;
  }

  // The model's options (what the exact engine and the policies panel take).
  model() {
    const v = this.controls.values();
    delete v.mode; delete v.tasks; delete v.seed;
    return v;
  }

  validate() {
    const v = this.controls.values();
    const bad = this.controls.invalid();
    if (bad) return bad;
    return steps(v) ? qError(Number(v.p), Number(v.q)) : null;
  }

  changed() {
    this.stopStream();
    this.debounce((signal) => this.compute(signal));
  }

  stopStream() {
    if (this.closeStream) this.closeStream();
    this.closeStream = null;
  }

  async compute(signal) {
    const bad = this.validate();
    // The policies panel follows the model, not the simulation's tasks or seed.
    const model = bad ? null : this.model();
    if (JSON.stringify(model) !== this.lastModel) {
      this.lastModel = JSON.stringify(model);
      this.onModel(model);
    }
    this.clearNumbers();
    if (bad) { this.error(bad); return; }
    this.error(null);
    const v = this.controls.values();
    if (steps(v)) {
      const independent = (1 - Math.pow(Number(v.p), Number(v.r) + 1)) ** Number(v.n);
      this.setText("formula", prob6(independent));
    }
    const [exact, csv] = await Promise.all([getJson("exact", this.model(), signal),
      getText("sweep", this.sweepParams(v), signal)]);
    if (signal.aborted) return;
    this.exact = exact;
    this.setText("formula", prob6(exact.independent));
    this.setText("exact", prob6(exact.success));
    this.sweep = parseCsv(csv);
    this.drawSuccess(v);
    this.drawRequests(exact);
    this.simulate(v, signal);
  }

  clearNumbers() {
    for (const id of ["formula", "exact", "simulated", "interval"]) this.setText(id, "–");
    this.progress.value = 0;
    this.sim = null;
  }

  // The sweep behind the success chart: q over [0, 1] (points invalid for p
  // are skipped by sweep), or in seconds mode the outage length up to three
  // times the current one.
  sweepParams(v) {
    const model = this.model();
    if (steps(v)) return { ...model, q: "0:1:0.02", tasks: 0 };
    const tBad = Number(v["t-bad"]);
    const step = Number((tBad * 3 / 30).toPrecision(2));
    return { ...model, "t-bad": `${step}:${Number((step * 30).toPrecision(6))}:${step}`, tasks: 0 };
  }

  simulate(v, signal) {
    const params = { ...this.model(), tasks: v.tasks, seed: v.seed };
    this.setText("simulated", "running…");
    this.closeStream = stream(params, {
      onProgress: (done, total) => { if (!signal.aborted) this.progress.value = total > 0 ? done / total : 0; },
      onResult: (sim) => {
        if (signal.aborted) return;
        this.closeStream = null;
        this.sim = sim;
        this.progress.value = 1;
        this.setText("simulated", `${sim.successes}/${sim.tasks}`);
        this.setText("interval", interval4(sim.ci_low, sim.ci_high));
        this.drawSuccess(v);
      },
      onError: (message) => {
        if (signal.aborted) return;
        this.closeStream = null;
        this.setText("simulated", "–");
        this.error(message);
      },
    });
  }

  drawSuccess(v) {
    const x = steps(v) ? "q" : "t_bad";
    const rows = this.sweep.filter((row) => row.exact !== null);
    const here = { x: steps(v) ? Number(v.q) : Number(v["t-bad"]), y: this.exact.success };
    const sim = this.sim;
    const columns = [x, "exact", "independent", "mean_requests"];
    const label = steps(v) ? "q (P(bad | previous bad))" : "t-bad (mean outage, seconds)";
    const caption = CAPTIONS[steps(v) ? "steps" : "seconds"];
    this.successChart.setCaption(caption.title, caption.text);
    this.successChart.show({ columns, rows }, (width) => Plot.plot({
      width, height: 260, marginLeft: 48,
      x: { label, domain: steps(v) ? [0, 1] : undefined },
      y: { label: "P(task finishes)", grid: true, domain: [Math.min(0, ...rows.map((r) => r.exact)), 1] },
      marks: [
        steps(v) ? Plot.ruleY([this.exact.independent], { stroke: "#0072b2", strokeDasharray: "6,4" })
          : Plot.line(rows, { x, y: "independent", stroke: "#0072b2", strokeDasharray: "6,4" }),
        Plot.line(rows, { x, y: "exact", stroke: "#d55e00", strokeWidth: 2 }),
        sim ? Plot.ruleX([here], { x: "x", y1: () => sim.ci_low, y2: () => sim.ci_high, stroke: "black", strokeWidth: 2 }) : null,
        Plot.dot([here], { x: "x", y: "y", r: 5, fill: "#d55e00", stroke: "white" }),
        Plot.text([here], { x: "x", y: "y", text: () => `now ${prob6(here.y)}`, dy: -12, fontWeight: "bold" }),
        Plot.tip(rows, Plot.pointerX({ x, y: "exact",
          title: (r) => `${x} = ${r[x]}\nexact ${prob6(r.exact)}\nindependent ${prob6(r.independent)}` })),
      ],
    }), "Orange: exact (bursts). Blue dashed: the independent formula. Black bar: the simulation's 95% interval.");
  }

  drawRequests(exact) {
    const rows = exact.requests ?? [];
    const columns = ["requests", "outcome", "probability"];
    if (rows.length === 0) {
      this.requestsChart.clear("The requests distribution was left out (too much work for the exact engine).");
      return;
    }
    const color = outcomeScale(rows.map((r) => r.outcome));
    const xs = [...new Set(rows.map((r) => r.requests))].sort((a, b) => a - b);
    const every = Math.max(1, Math.ceil(xs.length / 12));
    const note = exact.distribution_complete === false
      ? `Partial: ${prob6(exact.pruned_mass)} of the probability was pruned.` : `Mean ${exact.mean_requests.toFixed(3)} requests per task.`;
    this.requestsChart.show({ columns, rows }, (width) => Plot.plot({
      width, height: 240, marginLeft: 48,
      x: { label: "requests per task", type: "band", ticks: xs.filter((_, i) => i % every === 0) },
      y: { label: "probability", grid: true },
      color: { ...color, label: "outcome" },
      marks: [
        Plot.barY(rows, { x: "requests", y: "probability", fill: "outcome", tip: true,
          title: (r) => `${r.requests} requests, ${r.outcome}: ${prob6(r.probability)}` }),
        Plot.ruleY([0]),
      ],
    }), note);
  }
}
