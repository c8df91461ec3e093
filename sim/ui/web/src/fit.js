// The fit panel: a request log (a relsim log or plan, CSV or JSON Lines,
// OTLP/JSON, a LiteLLM log) fitted by `relsim fit --json` (POST /api/fit):
// p and q with their 95% intervals, the tests' verdict, the runs of bad and
// of good requests by length against the fitted chain's laws, and the
// `relsim exact` line of the fit; one click carries p and q to the bursts
// panel.

import * as Plot from "@observablehq/plot";
import { postJson } from "./api.js";
import { interval4 } from "./format.js";
import { Panel } from "./panel.js";

export const FIELDS = [
  { key: "log", kind: "file", accept: ".jsonl,.json,.csv,.txt,.log",
    hint: "a request log: relsim's, a plan, CSV or JSON Lines, OTLP/JSON, LiteLLM (docs/fit.md)" },
  { key: "format", kind: "select", options: ["auto", "relsim", "csv", "otlp", "litellm"], value: "auto",
    hint: "the log's format (auto: from its content)" },
  { key: "sdk-retries", kind: "number", min: 0, max: 100, step: 1, value: "0",
    hint: "each record is one model call through an SDK that retries up to this many times inside it" },
];

// The two laws: runs of bad requests end with 1 - q, runs of good ones with p0.
const RUNS = [
  { key: "bad", name: "fit-bad-runs", title: "Runs of bad requests.",
    text: "At each length, the runs that ended there (bars) against what the fitted chain expects of the runs that reached it (dots): a burst is a run of bad requests." },
  { key: "good", name: "fit-good-runs", title: "Runs of good requests.",
    text: "The same for the runs of good requests between bursts." },
];

// The server fits a copy in a private temporary folder; its messages name
// that copy, which means nothing to the person who opened the file.
function ownName(message, name) {
  return message.replace(/[^\s'"]*\/relsim-ui-[^/\s'"]*\/log\b/g, name);
}

export class Fit extends Panel {
  // useModel(p, q): carries the estimate to the other panels.
  constructor(useModel) {
    super("fit");
    this.controls = this.controlsIn(FIELDS);
    this.charts = RUNS.map((r) => this.figure({ name: r.name, title: r.title, text: r.text }));
    this.section.querySelector('[data-action="fit"]').addEventListener("click", () => this.run());
    this.useButton = this.section.querySelector('[data-action="use"]');
    this.useButton.addEventListener("click", () => {
      if (this.result && this.result.q !== null) useModel(String(this.result.p), String(this.result.q));
    });
    this.result = null;
  }

  run() {
    this.now((signal) => this.fit(signal));
  }

  clearOutputs(summary) {
    this.result = null;
    this.useButton.disabled = true;
    for (const id of ["fit-p", "fit-p-ci", "fit-q", "fit-q-ci"]) this.setText(id, "–");
    this.setText("fit-verdict", "");
    this.setText("fit-exact", "");
    this.setText("fit-summary", summary);
    for (const chart of this.charts) chart.clear();
  }

  async fit(signal) {
    const file = this.controls.get("log");
    if (!file) { this.error("open a request log (log) first"); return; }
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.error(null);
    this.clearOutputs("fitting…");
    const v = this.controls.values();
    let result;
    try {
      result = await postJson("fit", { format: v.format, "sdk-retries": v["sdk-retries"] }, { log: await file.text() },
        signal);
    } catch (err) {
      this.setText("fit-summary", "");
      throw new Error(ownName(err.message, file.name));
    }
    if (signal.aborted) return;
    this.show(result);
  }

  show(f) {
    this.result = f;
    const number = (x) => (x === null ? "–" : x.toFixed(4));
    this.setText("fit-p", number(f.p));
    this.setText("fit-p-ci", f.p_ci ? interval4(f.p_ci[0], f.p_ci[1]) : "–");
    this.setText("fit-q", number(f.q));
    this.setText("fit-q-ci", f.q_ci ? interval4(f.q_ci[0], f.q_ci[1]) : "–");
    this.setText("fit-verdict", f.verdict);
    this.setText("fit-exact", f.exact_command || "q is not identified: no exact line");
    this.setText("fit-summary", `${f.records} records in ${f.tasks} tasks` +
      (Object.keys(f.skipped).length ? `; skipped: ${Object.entries(f.skipped).map(([k, n]) => `${k} ${n}`).join(", ")}` : ""));
    this.useButton.disabled = f.q === null;
    RUNS.forEach((r, i) => this.drawRuns(this.charts[i], f.run_lengths[r.key]));
  }

  drawRuns(chart, rows) {
    if (!rows.length) { chart.clear("No run of this outcome."); return; }
    chart.show({ columns: ["length", "at_risk", "ended", "expected"], rows }, (width) => Plot.plot({
      width, height: 200, marginLeft: 52,
      x: { label: "run length (requests)", type: "band" },
      y: { label: "runs that ended", grid: true },
      marks: [
        Plot.barY(rows, { x: "length", y: "ended", fill: "#0072b2", tip: true,
          title: (r) => `length ${r.length}: ${r.ended} of ${r.at_risk} runs ended (expected ${r.expected?.toFixed(1)})` }),
        Plot.dot(rows.filter((r) => r.expected !== null), { x: "length", y: "expected", fill: "#d55e00", r: 3.5 }),
        Plot.ruleY([0]),
      ],
    }));
  }
}
