// The trend panel: a history file that `relsim contention run --history`
// appended to, one line a run, read back by `relsim contention trend` (POST
// /api/contention/trend) into the essay's four trend lines across runs:
// accuracy, the tool 429 rate under a burst, the cross-tenant leak rate and
// the pool wait p99, each rate with its 95% Wilson interval, and a table of
// the same numbers.

import * as Plot from "@observablehq/plot";
import { postJson } from "./api.js";
import { Panel } from "./panel.js";

export const FIELDS = [
  { key: "history", kind: "file", accept: ".jsonl,.json,.txt",
    hint: "the file relsim contention run --history appended to (JSON Lines, one run a line)" },
];

// The four lines: the JSON's key, the chart's name, title and axis.
const LINES = [
  { key: "success", name: "trend-success", title: "Accuracy.", text: "Agents that did their task right, of those not killed.", unit: "share" },
  { key: "burst_429", name: "trend-burst-429", title: "Tool 429 rate under a burst.", text: "429s of the tool calls of a burst (a burst run, or a mixed run's burst).", unit: "429s of calls" },
  { key: "leak", name: "trend-leak", title: "Cross-tenant leak rate.", text: "Cache lookups answered with another tenant's entry.", unit: "wrong-tenant hits" },
  { key: "pool_wait_p99", name: "trend-pool-wait", title: "Pool wait p99.", text: "Model seconds a short task waited for a connection behind long streams.", unit: "model seconds" },
];

const COLUMNS = [
  ["run", "run"], ["time", "time"], ["scenario", "scenario"], ["agent", "agent"], ["seed", "seed"],
  ["success", "accuracy"], ["burst_429", "429 rate (burst)"], ["leak", "leak rate"], ["pool_wait_p99", "pool wait p99 (s)"],
];

// A rate's value (4 places), the pool wait (3), or the text, as the table
// shows it; "–" for none.
function cell(value, key) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "object") return value.value.toFixed(4);
  return key === "pool_wait_p99" ? value.toFixed(3) : String(value);
}

// The server reads a copy in a private temporary folder; its messages name
// that copy, which means nothing to the person who opened the file.
function ownName(message, name) {
  return message.replace(/[^\s'"]*\/history\.jsonl/g, name);
}

export class Trend extends Panel {
  constructor() {
    super("trend");
    this.controls = this.controlsIn(FIELDS);
    this.table = this.out("trend-table");
    this.charts = LINES.map((line) => this.figure({ name: line.name, title: line.title, text: line.text }));
    this.section.querySelector('[data-action="trend"]').addEventListener("click", () => this.run());
    this.runs = [];
    this.fillTable();
  }

  run() {
    this.now((signal) => this.read(signal));
  }

  async read(signal) {
    const file = this.controls.get("history");
    if (!file) { this.error("open a history file (history) first"); return; }
    this.error(null);
    this.runs = [];
    this.fillTable();
    for (const chart of this.charts) chart.clear();
    this.setText("trend-summary", "reading…");
    let result;
    try {
      result = await postJson("contention/trend", {}, { history: await file.text() }, signal);
    } catch (err) {
      this.setText("trend-summary", "");
      throw new Error(ownName(err.message, file.name));
    }
    if (signal.aborted) return;
    this.runs = result.runs;
    this.summarise();
    this.fillTable();
    this.drawCharts();
  }

  summarise() {
    const first = this.runs[0], last = this.runs[this.runs.length - 1];
    const change = LINES.map(({ key, unit }) => {
      const a = first[key], b = last[key];
      const v = (x) => (x === null ? "–" : typeof x === "object" ? x.value.toFixed(4) : x.toFixed(3));
      return `${key} ${v(a)} → ${v(b)}${unit === "model seconds" ? " s" : ""}`;
    });
    this.setText("trend-summary", `${this.runs.length} runs, first to last: ${change.join("; ")}.`);
  }

  fillTable() {
    this.fillRows(this.table, COLUMNS, this.runs, (run, key) => cell(run[key], key));
    this.table.caption.textContent = this.runs.length === 0 ? "Per run: no history read yet."
      : `Per run: ${this.runs.length} runs, in the file's order.`;
  }

  drawCharts() {
    LINES.forEach((line, i) => {
      const rows = this.runs.filter((r) => r[line.key] !== null).map((r) => {
        const v = r[line.key];
        return typeof v === "object"
          ? { run: r.run, agent: r.agent, value: v.value, low: v.ci[0], high: v.ci[1] }
          : { run: r.run, agent: r.agent, value: v, low: v, high: v };
      });
      const chart = this.charts[i];
      if (rows.length === 0) { chart.clear("No run in this history measures it."); return; }
      chart.show({ columns: ["run", "agent", "value", "low", "high"], rows }, (width) => Plot.plot({
        width, height: 200, marginLeft: 52,
        x: { label: "run", ticks: this.runs.map((r) => r.run), tickFormat: "d" },
        y: { label: line.unit, grid: true, zero: true },
        color: { domain: ["naive", "careful", "agent-cmd"], range: ["#d55e00", "#009e73", "#0072b2"], label: "agent" },
        marks: [
          Plot.ruleX(rows, { x: "run", y1: "low", y2: "high", stroke: "agent" }),
          Plot.line(rows, { x: "run", y: "value", stroke: "#555" }),
          Plot.dot(rows, { x: "run", y: "value", fill: "agent", r: 4, tip: true,
            title: (r) => `run ${r.run} (${r.agent}): ${r.value.toFixed(4)} [${r.low.toFixed(4)}, ${r.high.toFixed(4)}]` }),
        ],
      }));
    });
  }
}
