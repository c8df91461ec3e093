// The tune panel: the retry schedules that reach a target success in time
// mode (`relsim tune --json`, GET /api/tune): the Pareto front as a
// scatter (success against mean or p99 seconds, mean requests as colour),
// the three anchors (the SDK default, 10 attempts, AWS standard mode)
// marked, and a chosen point's settings with the SDK's own code where the
// SDKs can express it.

import * as Plot from "@observablehq/plot";
import { getJson } from "./api.js";
import { Panel } from "./panel.js";

export const FIELDS = [
  { key: "target", kind: "number", min: 0.000001, max: 0.999999, step: "any", value: "0.99", hint: "P(success) to reach" },
  { key: "n", kind: "number", min: 1, max: 100000, step: 1, value: "20", hint: "model calls per task" },
  { key: "t-good", kind: "number", min: 0.001, max: 1e9, value: "3600", hint: "mean seconds between outages" },
  { key: "t-bad", kind: "number", min: 0.001, max: 1e9, value: "120", hint: "mean length of an outage, seconds" },
  { key: "request-seconds", kind: "number", min: 0, max: 1e9, value: "10", hint: "seconds a request takes" },
  { key: "kinds", kind: "text", value: "http_529=1", hint: "fault kinds of bad requests, e.g. http_529=1 or cut=1,stall=1" },
  { key: "objective", kind: "select", options: ["requests", "mean-seconds", "p99-seconds"], value: "requests",
    hint: "the recommendation: least mean requests, mean seconds or p99 seconds" },
  { key: "policies", kind: "select", options: ["layered,budgeted", "layered", "budgeted"], value: "layered,budgeted",
    hint: "the policies searched", when: (v) => !v.sdk },
  { key: "sdk", kind: "checkbox", hint: "only what the official SDKs expose: maxRetries with their own backoff" },
  { key: "rank", kind: "number", min: 1, max: 100000, step: 1, value: "1",
    hint: "the front's point to show (1: the best)" },
];

const MARK = { "sdk-default": "SDK default", "10-attempts": "10 attempts", "aws-standard": "AWS standard" };

function settings(pt) {
  const b = pt.B === null ? "" : `, B = ${pt.B}`;
  return `${pt.policy}, s = ${pt.s}, r = ${pt.r}${b}, backoff ${pt.backoff}`;
}

function figures(pt) {
  const p99 = pt.p99_seconds === null ? "" : `, p99 ${pt.p99_seconds.toFixed(1)} s`;
  return `success ${pt.success.toFixed(6)}, ${pt.mean_requests.toFixed(3)} requests, ` +
    `${pt.mean_seconds.toFixed(2)} s${p99}`;
}

export class Tune extends Panel {
  constructor() {
    super("tune");
    this.controls = this.controlsIn(FIELDS);
    this.chart = this.figure({ name: "tune-front", title: "The Pareto front.",
      text: "Every schedule that reaches the target and that no other beats on success, requests and seconds at once; colour: mean requests; black: the anchors (which may miss the target); ringed: the chosen point." });
    this.section.querySelector('[data-action="tune"]').addEventListener("click", () => this.run());
    this.controls.onChange((key) => { if (key === "rank" && this.result) this.choose(); });
    this.result = null;
  }

  params() {
    const v = this.controls.values();
    return { target: v.target, n: v.n, "t-good": v["t-good"], "t-bad": v["t-bad"],
      "request-seconds": v["request-seconds"], kinds: v.kinds || undefined, objective: v.objective,
      policies: v.sdk ? undefined : v.policies, sdk: v.sdk ? "1" : undefined };
  }

  run() {
    this.now((signal) => this.tune(signal));
  }

  async tune(signal) {
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.error(null);
    this.result = null;
    this.chart.clear();
    this.setText("tune-summary", "tuning…");
    this.setText("tune-chosen", "");
    this.setText("tune-snippet", "");
    let result;
    try {
      result = await getJson("tune", this.params(), signal);
    } catch (err) {
      this.setText("tune-summary", "");
      throw err;
    }
    if (signal.aborted) return;
    this.result = result;
    const anchors = result.anchors.map((a) => `${MARK[a.name]} ${a.success.toFixed(6)}${a.meets_target ? "" : " (misses)"}`);
    this.setText("tune-summary", `${result.meeting_target} of ${result.evaluated} schedules reach ${result.target}; ` +
      `${result.front.length} on the front. Anchors: ${anchors.join("; ")}.` +
      (result.notes.length ? ` Note: ${result.notes.join(" ")}` : ""));
    this.choose();
  }

  // The chosen rank (clamped to the front), its settings and code, and the chart with it ringed.
  choose() {
    const front = this.result.front;
    if (front.length === 0) {
      this.setText("tune-chosen", "No schedule in the space reaches the target.");
      this.setText("tune-snippet", "");
      this.chart.clear("No schedule reaches the target.");
      return;
    }
    const rank = Math.min(Math.max(1, Number(this.controls.get("rank")) || 1), front.length);
    const pt = front[rank - 1];
    this.setText("tune-chosen", `#${rank} of ${front.length}: ${settings(pt)}: ${figures(pt)}.`);
    this.setText("tune-snippet", pt.snippets ? pt.snippets.typescript
      : `The SDKs cannot express ${pt.policy === "budgeted" ? "a budget per call" : `the backoff ${pt.backoff}`}: ` +
        `write the retry loop (relsim exact --policy ${pt.policy} --s ${pt.s} --r ${pt.r}` +
        `${pt.B === null ? "" : ` --B ${pt.B}`} --backoff ${pt.backoff} ... computes it).`);
    this.draw(rank);
  }

  draw(rank) {
    const p99 = this.result.objective === "p99-seconds";
    const x = p99 ? "p99_seconds" : "mean_seconds";
    const rows = this.result.front.map((pt, i) => ({ rank: i + 1, ...pt, snippets: undefined }));
    const anchors = this.result.anchors.filter((a) => a[x] !== null).map((a) => ({ ...a, label: MARK[a.name] }));
    const chosen = rows.filter((r) => r.rank === rank);
    const columns = ["rank", "policy", "s", "r", "B", "backoff", "success", "mean_requests", "mean_seconds", "p99_seconds"];
    this.chart.show({ columns, rows }, (width) => Plot.plot({
      width, height: 260, marginLeft: 60,
      x: { label: p99 ? "p99 seconds" : "mean seconds", grid: true },
      y: { label: "success", grid: true },
      color: { type: "linear", scheme: "viridis", label: "mean requests" },
      marks: [
        Plot.dot(rows, { x, y: "success", fill: "mean_requests", r: 3.5, tip: true,
          title: (r) => `#${r.rank}: ${settings(r)}\n${figures(r)}` }),
        Plot.dot(anchors, { x, y: "success", symbol: "triangle", fill: "black", r: 6 }),
        Plot.text(anchors, { x, y: "success", text: "label", dy: -12, fontSize: 11 }),
        Plot.dot(chosen, { x, y: "success", r: 9, stroke: "#d55e00", strokeWidth: 2.5 }),
        Plot.ruleY([this.result.target], { stroke: "#999", strokeDasharray: "4,3" }),
      ],
    }), "Anchors below the dashed line miss the target.");
  }
}
