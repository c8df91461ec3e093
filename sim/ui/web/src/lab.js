// The fault lab: one scripted fault (once or always) against one retry
// policy. The oracle's prediction follows every change; "run live" runs
// relsim's real client against the embedded mock server and draws each
// request on a timeline (start to end, coloured by the reply, labelled by
// the retry layer that sent it).

import * as Plot from "@observablehq/plot";
import { getJson } from "./api.js";
import { replyScale } from "./colors.js";
import { seconds } from "./format.js";
import { Panel } from "./panel.js";

export const FAULTS = ["cut", "no_stop", "malformed", "overloaded", "stall", "slow_headers", "http_429",
  "http_500", "http_503", "http_529", "reset", "http_400"];

export const FIELDS = [
  { key: "fault", kind: "select", options: FAULTS, value: "slow_headers",
    hint: "what the mock server does to a request" },
  { key: "times", kind: "select", options: ["once", "always"], value: "always",
    hint: "once: the first request only; always: every request" },
  { key: "policy", kind: "select", options: ["naive", "layered", "budgeted"], value: "naive",
    hint: "how the client retries" },
  { key: "s", kind: "number", min: 0, max: 100, step: 1, value: "2", hint: "HTTP-layer (SDK) retries" },
  { key: "r", kind: "number", min: 0, max: 1000, step: 1, value: "2", hint: "stream-layer retries per call" },
  { key: "n", kind: "number", min: 1, max: 100, step: 1, value: "1", hint: "model calls per task" },
  { key: "B", kind: "number", min: 1, max: 10000, step: 1, value: "3", hint: "budgeted only: requests per call" },
  { key: "header-timeout", kind: "number", min: 0.001, max: 60, value: "0.2",
    hint: "seconds to wait for response headers" },
  { key: "idle-timeout", kind: "number", min: 0.001, max: 60, value: "0.2",
    hint: "seconds to wait between two stream events" },
  { key: "task-timeout", kind: "number", min: 0.001, max: 60, value: "2",
    hint: "seconds for the whole task (its deadline)" },
];

// The live run's settings that are no controls, given to the oracle too so
// that its prediction is of this very run: backoffs scaled down so a run
// takes seconds, and relsim live's own connect and call timeouts.
const FIXED = { "time-scale": "0.01", "connect-timeout": "1", "call-timeout": "10" };

export class Lab extends Panel {
  constructor() {
    super("lab");
    this.controls = this.controlsIn(FIELDS);
    this.timeline = this.figure({ name: "timeline",
      title: "Timeline of the live run.",
      text: "One bar per request the client sent, from its start to its end (ms since the run began), " +
        "coloured by the server's reply and labelled by the layer that sent it: first, http (an SDK " +
        "retry), stream (a retry after a failed stream) or call (the next call)." });
    this.runButton = this.section.querySelector('[data-action="run-live"]');
    this.runButton.addEventListener("click", () => this.runLive());
    this.liveController = null;
  }

  params() {
    const v = this.controls.values();
    if (v.policy !== "budgeted") delete v.B;
    return { ...v, ...FIXED };
  }

  changed() {
    this.clearLive();
    for (const id of ["oracle-outcome", "oracle-requests", "oracle-max-wait"]) this.setText(id, "–");
    this.debounce((signal) => this.oracle(signal));
  }

  async oracle(signal) {
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.error(null);
    const result = await getJson("oracle", this.params(), signal);
    if (signal.aborted) return;
    const task = (result.per_task ?? [])[0] ?? {};
    this.oracleResult = task;
    this.setWord("oracle-outcome", task.outcome ?? Object.keys(result.outcomes ?? {})[0] ?? "–");
    this.setText("oracle-requests", String(task.requests ?? result.requests));
    this.setText("oracle-max-wait", seconds(task.max_wait_seconds));
  }

  clearLive() {
    if (this.liveController) this.liveController.abort();
    this.liveController = null;
    this.runButton.disabled = false;
    for (const id of ["live-outcome", "live-requests"]) this.setText(id, "–");
    this.setText("live-status", "");
    this.timeline.clear();
  }

  async runLive() {
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.clearLive();
    this.error(null);
    const controller = new AbortController();
    this.liveController = controller;
    this.runButton.disabled = true;
    this.setText("live-status", "running the client against the mock server…");
    try {
      const live = await getJson("live", this.params(), controller.signal);
      if (controller.signal.aborted) return;
      this.showLive(live);
    } catch (err) {
      if (controller.signal.aborted) return;
      this.setText("live-status", "");
      this.error(err.message);
    } finally {
      if (this.liveController === controller) {
        this.liveController = null;
        this.runButton.disabled = false;
      }
    }
  }

  showLive(live) {
    const tasks = live.timeline?.tasks ?? [];
    const first = tasks[0] ?? {};
    this.setWord("live-outcome", first.live ?? Object.keys(live.outcomes ?? {})[0] ?? "–");
    this.setText("live-requests", String(first.live_requests ?? live.requests));
    this.setText("live-status", live.mismatches === 0 ? "agrees with the oracle" : "differs from the oracle");
    const longest = Math.max(0, ...tasks.map((t) => (t.seconds ?? 0) * 1000));
    this.drawTimeline(live.timeline?.requests ?? [], tasks.length > 1, longest);
  }

  // longestMs: the longest task's wall time, where a request that never
  // ended (a hang cut by the deadline) is drawn to.
  drawTimeline(requests, manyTasks, longestMs) {
    if (requests.length === 0) { this.timeline.clear("The run sent no request."); return; }
    const t0 = Math.min(...requests.map((r) => r.start_ms));
    const last = Math.max(t0 + longestMs, t0 + 1, ...requests.map((r) => r.end_ms ?? r.start_ms));
    // A cut stream ends in a fraction of a millisecond: every bar gets at
    // least a sliver of the axis so that it can be seen (its tip tells the
    // true length).
    const sliver = (last - t0) / 150;
    const rows = requests.map((r) => {
      const from = r.start_ms - t0;
      const to = (r.end_ms ?? last) - t0;
      return { ...r, from_ms: from, to_ms: Math.max(to, from + sliver), ms: to - from,
        label: `${manyTasks ? `task ${r.task} ` : ""}#${r.request + 1} ${r.layer}` };
    });
    const columns = ["task", "request", "start_ms", "end_ms", "reply", "status", "end", "retry_count", "layer"];
    const color = replyScale(rows.map((r) => r.reply));
    const height = Math.max(120, 26 * rows.length + 50);
    this.timeline.show({ columns, rows }, (width) => Plot.plot({
      width, height, marginLeft: manyTasks ? 120 : 84,
      x: { label: "ms since the first request", grid: true },
      y: { label: "request and layer", domain: rows.map((r) => r.label) },
      color: { ...color, label: "reply" },
      marks: [
        Plot.barX(rows, { x1: "from_ms", x2: "to_ms", y: "label", fill: "reply", insetTop: 3, insetBottom: 3,
          tip: true, title: (r) => `request ${r.request + 1} (${r.layer}): ${r.reply}, ` +
            `${r.ms.toFixed(1)} ms, status ${r.status}, ${r.end}, retry count ${r.retry_count}` }),
        Plot.ruleX([0]),
      ],
    }), `${rows.length} request${rows.length === 1 ? "" : "s"}. A request the client never ended is drawn ` +
      "to the end of the run.");
  }
}
