// The audit panel: a plan and a request log from `relsim serve --plan
// --log` are checked task by task against a policy (or every policy, with
// infer); the verdicts fill a table that the verdict and task filters
// narrow without asking the server again.

import * as Plot from "@observablehq/plot";
import { postJson } from "./api.js";
import { Panel } from "./panel.js";

export const FIELDS = [
  { key: "plan", kind: "file", accept: ".jsonl,.json,.txt", hint: "the plan the server served (JSON Lines)" },
  { key: "log", kind: "file", accept: ".jsonl,.json,.txt", hint: "the server's request log (relsim serve --log)" },
  { key: "policy", kind: "select", options: ["naive", "layered", "budgeted", "simple"], value: "naive",
    hint: "the policy to check against (ignored with infer)" },
  { key: "s", kind: "number", min: 0, max: 100, step: 1, value: "2", hint: "HTTP-layer (SDK) retries" },
  { key: "r", kind: "number", min: 0, max: 1000, step: 1, value: "2", hint: "stream-layer retries per call" },
  { key: "B", kind: "number", min: 1, max: 10000, step: 1, value: "3", hint: "budgeted: requests per call" },
  { key: "infer", kind: "checkbox", hint: "search every policy, s, r and B for those consistent with the log" },
];

export const FILTERS = [
  { key: "verdict", kind: "select", options: ["all", "ok", "mismatch"], value: "all", hint: "show these tasks" },
  { key: "task-filter", kind: "text", value: "", placeholder: "e.g. 3, 1,4 or 2-5",
    hint: "task numbers (3, 1,4 or 2-5) or words in the outcome or detail" },
];

const COLUMNS = [
  ["task", "task"], ["requests_expected", "requests expected"], ["requests_sent", "requests sent"],
  ["outcome_expected", "outcome expected"], ["outcome_reported", "outcome reported"], ["hang", "hang"],
  ["verdict", "verdict"], ["checks", "checks"], ["requests_per_call", "per call"], ["detail", "detail"],
];

function text(value) {
  if (Array.isArray(value)) return value.join(" ");
  return value === null || value === undefined ? "" : String(value);
}

// "3", "1,4", "2-5" select task numbers; any other text is looked for in
// the outcomes and the detail.
function taskMatcher(filter) {
  const words = filter.trim();
  if (words === "") return () => true;
  if (/^[\d\s,-]+$/.test(words)) {
    const parts = words.split(",").map((p) => p.trim()).filter(Boolean);
    return (row) => parts.some((part) => {
      const [low, high] = part.split("-").map((x) => Number(x.trim()));
      return high === undefined || Number.isNaN(high) ? row.task === low : row.task >= low && row.task <= high;
    });
  }
  const needle = words.toLowerCase();
  return (row) => [row.outcome_expected, row.outcome_reported, row.detail, row.checks]
    .some((value) => text(value).toLowerCase().includes(needle));
}

// The server audits copies in a private temporary folder; its messages
// name those copies, which mean nothing to the person who opened the files.
function ownNames(message, planName, logName) {
  return message.replace(/[^\s'"]*\/plan\.jsonl/g, planName).replace(/[^\s'"]*\/log\.jsonl/g, logName);
}

function policyText(p) {
  if (!p) return "";
  return `${p.policy}${p.policy === "simple" ? "" : ` s = ${p.s}`}, r = ${p.r}${p.B ? `, B = ${p.B}` : ""}`;
}

export class Audit extends Panel {
  constructor() {
    super("audit");
    this.controls = this.controlsIn(FIELDS);
    this.filters = this.controlsIn(FILTERS, "audit-filter");
    this.filters.onChange(() => this.fillTable());
    this.table = this.out("audit-table");
    this.chart = this.figure({ name: "audit",
      title: "Requests per task.",
      text: "Bars: the requests the client sent; black ticks: what the policy sends. Colour: the verdict." });
    this.section.querySelector('[data-action="audit"]').addEventListener("click", () => this.run());
    this.rows = [];
  }

  params() {
    const v = this.controls.values();
    if (v.infer) return { infer: "1" };
    return { policy: v.policy, s: v.s, r: v.r, B: v.policy === "budgeted" ? v.B : undefined };
  }

  run() {
    this.now((signal) => this.audit(signal));
  }

  async audit(signal) {
    const plan = this.controls.get("plan");
    const log = this.controls.get("log");
    if (!plan || !log) { this.error("open a plan file (plan) and a request log (log) first"); return; }
    const bad = this.controls.invalid();
    if (bad) { this.error(bad); return; }
    this.error(null);
    // The last audit's rows go at once: what shows is always this audit's.
    this.rows = [];
    this.fillTable();
    this.chart.clear();
    this.out("audit-summary").textContent = "auditing…";
    const body = { plan: await plan.text(), log: await log.text() };
    let result;
    try {
      result = await postJson("audit", this.params(), body, signal);
    } catch (err) {
      this.out("audit-summary").textContent = "";
      throw new Error(ownNames(err.message, plan.name, log.name));
    }
    if (signal.aborted) return;
    this.rows = result.per_task ?? [];
    this.summarise(result);
    this.fillTable();
    this.drawChart();
  }

  summarise(a) {
    const lines = [];
    lines.push(`Audited against ${policyText(a.policy)}: ${a.tasks.audited} tasks audited, ` +
      `${a.tasks.not_run} not run, ${a.tasks.no_outcome} with no outcome to check.`);
    const checks = Object.entries(a.mismatches.by_check).filter(([, c]) => c > 0).map(([k, c]) => `${k} ${c}`);
    lines.push(a.mismatches.total === 0 ? "Every audited task behaves as the policy says."
      : `${a.mismatches.total} tasks differ from the policy (${checks.join(", ")}).`);
    const amp = a.amplification === null ? "" : ` (${a.amplification.toFixed(3)} times)`;
    lines.push(`Requests: ${a.requests.sent} sent, ${a.requests.expected} expected; the layered policy ` +
      `would send ${a.requests.layered}${amp}. Hangs: ${a.hangs}.`);
    lines.push(a.consistent.length === 0 ? "No policy is consistent with every task."
      : `Consistent with every task: ${a.consistent.map(policyText).join("; ")}.`);
    const box = this.out("audit-summary");
    box.replaceChildren(...lines.map((line) => {
      const p = document.createElement("p");
      p.textContent = line;
      return p;
    }));
  }

  fillTable() {
    const verdict = this.filters.get("verdict");
    const match = taskMatcher(this.filters.get("task-filter"));
    const shown = this.rows.filter((row) => (verdict === "all" || row.verdict === verdict) && match(row));
    this.fillRows(this.table, COLUMNS, shown, (row, key) => text(row[key]),
      (row) => (row.verdict === "ok" ? "ok" : "mismatch"));
    this.table.caption.textContent = this.rows.length === 0 ? "Per task: no audit yet."
      : `Per task: showing ${shown.length} of ${this.rows.length} tasks.`;
  }

  drawChart() {
    if (this.rows.length === 0) { this.chart.clear("No task was audited."); return; }
    const rows = this.rows.map((r) => ({ ...r, checks: text(r.checks) }));
    const columns = COLUMNS.map(([key]) => key);
    this.chart.show({ columns, rows }, (width) => Plot.plot({
      width, height: 220, marginLeft: 48,
      x: { label: "task", type: "band" },
      y: { label: "requests", grid: true },
      color: { domain: ["ok", "mismatch"], range: ["#009e73", "#d55e00"], label: "verdict" },
      marks: [
        Plot.barY(rows, { x: "task", y: "requests_sent", fill: "verdict", tip: true,
          title: (r) => `task ${r.task}: sent ${r.requests_sent}, expected ${r.requests_expected}\n${r.detail ?? ""}` }),
        Plot.tickY(rows, { x: "task", y: "requests_expected", stroke: "black", strokeWidth: 3 }),
        Plot.ruleY([0]),
      ],
    }));
  }
}
