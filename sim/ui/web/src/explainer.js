// The explainer (docs/ui.md, Explainer): the workbench's story in motion,
// 42 seconds in three scenes, every square and count from the engines'
// own seeded runs on this machine:
//
//   1. the chain ticks: the requests of the reference experiment's tasks
//      (p = 0.3, r = 2, n = 2), independent against bursty (q = 0.8), one
//      square a request, a retry marked where it lands;
//   2. naive and layered side by side on the same draws of slow headers in
//      bursts: 9 requests against 3 in a burst, a crash against an error;
//   3. the success counters of 10,000 tasks converging to the exact values.
//
// The draws are `relsim plan`'s (GET /api/plan), what each policy does
// with them `relsim oracle --per-task`'s (POST /api/oracle/plan), the exact
// values `relsim exact`'s. The picture is a pure function of the time t:
// render(t) draws the same frame however it got there, which is what lets
// scripts/explainer_video.sh step the page frame by frame into a video.

import * as Plot from "@observablehq/plot";
import { getJson, getText, postJson } from "./api.js";
import { prob6 } from "./format.js";
import { Panel } from "./panel.js";

// The reference experiment (docs/model.md, Reference experiment).
const MODEL = { p: 0.3, r: 2, n: 2 };
const SEED = 20261001;
const CONVERGE_TASKS = 10000;
const LOOP_TASKS = 400;
export const DURATION = 42;
export const FPS = 10;
const WINDOW = 64;  // squares on a tape

const CHAIN_SQUARES = 120;  // requests shown in scene 1

const SCENES = [
  { id: "chain", title: "The chain ticks", start: 0, end: 12 },
  { id: "loops", title: "Naive and layered, side by side", start: 12, end: 26 },
  { id: "converge", title: "The counters converge", start: 26, end: DURATION },
];

function sceneAt(t) {
  return SCENES.find((s) => t < s.end) ?? SCENES[SCENES.length - 1];
}

// Piecewise-linear time maps: [[s, value], ...] with s the scene's own seconds.
function along(points, s) {
  if (s <= points[0][0]) return points[0][1];
  for (let i = 1; i < points.length; i++) {
    const [s1, v1] = points[i];
    const [s0, v0] = points[i - 1];
    if (s <= s1) return v0 + ((v1 - v0) * (s - s0)) / (s1 - s0);
  }
  return points[points.length - 1][1];
}

// One run: the plan's draws cut to what the policy sent (the oracle's
// request count per task), flattened to the squares of a tape, with prefix
// counts so that any frame's counters cost O(1).
function run(planText, oracle, name) {
  const lines = planText.split("\n").filter((l) => l.length > 0);
  const draws = lines.slice(1).map((l) => JSON.parse(l).requests);
  const tasks = oracle.per_task;
  if (!Array.isArray(tasks) || tasks.length !== draws.length)
    throw new Error(`the oracle answered ${tasks?.length} tasks for a plan of ${draws.length}`);
  const cells = [];
  const taskEnd = [];  // index after each task's last square
  tasks.forEach((t, i) => {
    if (draws[i].length < t.requests)
      throw new Error(`task ${i} of the ${name} run sent ${t.requests} requests but its plan has ${draws[i].length} draws`);
    for (let k = 0; k < t.requests; k++) {
      const reply = draws[i][k];
      cells.push({ task: i, reply, retry: k > 0 && draws[i][k - 1] !== "ok",
        outcome: k === t.requests - 1 ? t.outcome : null });
    }
    taskEnd.push(cells.length);
  });
  const prefix = (f) => {
    const out = [0];
    for (const x of f) out.push(out[out.length - 1] + x);
    return out;
  };
  return {
    name, tasks, cells, taskEnd,
    bad: prefix(cells.map((c) => (c.reply === "ok" ? 0 : 1))),
    retries: prefix(cells.map((c) => (c.retry ? 1 : 0))),
    badRetries: prefix(cells.map((c) => (c.retry && c.reply !== "ok" ? 1 : 0))),
    done: prefix(tasks.map((t) => (t.outcome === "done" ? 1 : 0))),
    wrong: prefix(tasks.map((t) => (/^(crash|hang|partial_done)/.test(t.outcome) ? 1 : 0))),
    envError: prefix(tasks.map((t) => (t.outcome.startsWith("env_error") ? 1 : 0))),
  };
}

// Tasks whose last square is among the first k squares.
function tasksEnded(lane, k) {
  let lo = 0;
  let hi = lane.taskEnd.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (lane.taskEnd[mid] <= k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function percent(part, whole) {
  return whole > 0 ? `${Math.round((100 * part) / whole)}%` : "–";
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

export class Explainer extends Panel {
  constructor() {
    super("explainer");
    this.stage = this.out("explainer-stage");
    this.playButton = this.out("explainer-play");
    this.slider = this.out("explainer-time");
    this.clock = this.out("explainer-clock");
    this.tapes = this.out("explainer-tapes");
    this.legend = this.out("explainer-legend");
    this.chartBox = this.out("explainer-chart");
    this.counters = this.out("explainer-counters");
    this.caption = this.out("explainer-caption");
    this.sceneName = this.out("explainer-scene");
    this.slider.max = String(DURATION);
    this.slider.step = String(1 / FPS);
    this.t = 0;
    this.alone = false;
    this.data = null;
    this.loading = null;
    this.playing = false;
    this.lastFrame = -1;
    this.playButton.addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    this.slider.addEventListener("input", () => {
      this.pause();
      this.seek(Number(this.slider.value));
    });
    this.slider.addEventListener("change", () => this.onSettle());
    this.onSettle = () => {};
    // The data loads once the explainer comes into view (it is ~1 MB of
    // plans and per-task outcomes), or at once when asked to play or seek.
    if ("IntersectionObserver" in window) {
      const seen = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          seen.disconnect();
          this.ensure();
        }
      });
      seen.observe(this.section);
    } else this.ensure();
  }

  // The address's part (state.js): exp.t, the paused time, and exp.alone=1,
  // the explainer alone on the page at the window's size (for presenting,
  // and for scripts/explainer_video.sh).
  get controls() {
    return {
      keys: () => ["t", "alone"],
      state: () => ({ ...(this.t > 0 ? { t: this.t.toFixed(1) } : {}), ...(this.alone ? { alone: "1" } : {}) }),
      set: (key, value) => {
        const t = Number(value);
        if (key === "t" && value !== "" && Number.isFinite(t)) this.seek(t);
        if (key === "alone") this.setAlone(value === "1");
      },
      refreshVisibility: () => {},
    };
  }

  setAlone(on) {
    this.alone = on;
    document.body.classList.toggle("explainer-alone", on);
  }

  ensure() {
    if (!this.loading) {
      this.stage.dataset.state = "loading";
      this.loading = this.load().then((data) => {
        this.data = data;
        this.stage.dataset.state = "ready";
        this.error(null);
        this.lastFrame = Math.round(this.t * FPS);
        this.render(this.lastFrame / FPS);
      }, (err) => {
        // Not kept: the next Play or seek tries again.
        this.loading = null;
        this.stage.dataset.state = "failed";
        this.setCaption("The runs did not load (see the error above); press Play to try again.");
        this.error(`the explainer's runs did not load: ${err.message}`);
      });
    }
    return this.loading;
  }

  async load() {
    const base = { ...MODEL, seed: SEED };
    const loopPlan = { ...base, q: 0.8, tasks: LOOP_TASKS, kinds: "slow_headers=1", policy: "layered", s: 2,
      "max-requests": 9 };
    const [indepPlan, burstPlan, shPlan, exactIndep, exactBurst] = await Promise.all([
      getText("plan", { ...base, q: 0.3, tasks: CONVERGE_TASKS }),
      getText("plan", { ...base, q: 0.8, tasks: CONVERGE_TASKS }),
      getText("plan", loopPlan),
      getJson("exact", { ...MODEL, q: 0.3 }),
      getJson("exact", { ...MODEL, q: 0.8 }),
    ]);
    const [oIndep, oBurst, oNaive, oLayered] = await Promise.all([
      postJson("oracle/plan", {}, { plan: indepPlan }),
      postJson("oracle/plan", {}, { plan: burstPlan }),
      postJson("oracle/plan", { policy: "naive" }, { plan: shPlan }),
      postJson("oracle/plan", { policy: "layered" }, { plan: shPlan }),
    ]);
    const naive = run(shPlan, oNaive, "naive");
    const layered = run(shPlan, oLayered, "layered");
    // The featured task: the first that naive ends in a crash, and the
    // requests of its last call (those after the task's last good one).
    const featured = naive.tasks.findIndex((t) => t.outcome.startsWith("crash"));
    const lastCall = (lane, task) => {
      const from = task > 0 ? lane.taskEnd[task - 1] : 0;
      const cells = lane.cells.slice(from, lane.taskEnd[task]);
      const lastOk = cells.map((c) => c.reply).lastIndexOf("ok");
      return cells.length - (lastOk + 1);
    };
    return {
      independent: run(indepPlan, oIndep, "independent"),
      bursty: run(burstPlan, oBurst, "bursty"),
      naive, layered, featured,
      featuredCalls: featured < 0 ? null : { naive: lastCall(naive, featured), layered: lastCall(layered, featured),
        naiveOutcome: naive.tasks[featured].outcome, layeredOutcome: layered.tasks[featured].outcome },
      exact: { independent: exactIndep.success, bursty: exactBurst.success },
    };
  }

  play() {
    if (!this.data) {
      // Plays once the runs are in; a failed load is tried again.
      this.ensure().then(() => { if (this.data) this.play(); });
      return;
    }
    if (this.t >= DURATION) this.seek(0);
    this.playing = true;
    this.playButton.textContent = "Pause";
    const origin = performance.now() - this.t * 1000;
    const tick = (now) => {
      if (!this.playing) return;
      const t = Math.min(DURATION, (now - origin) / 1000);
      this.seek(t);
      if (t >= DURATION) this.pause();
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.playButton.textContent = "Play";
    this.onSettle();
  }

  // Moves to time t; draws only when the frame (t at FPS) changes.
  seek(t) {
    this.t = Math.max(0, Math.min(DURATION, t));
    const frame = Math.round(this.t * FPS);
    this.slider.value = String(frame / FPS);
    this.clock.textContent = `${(frame / FPS).toFixed(1)} s of ${DURATION} s`;
    const scene = sceneAt(frame / FPS);
    this.slider.setAttribute("aria-valuetext", `${(frame / FPS).toFixed(1)} s, scene ${SCENES.indexOf(scene) + 1} of ` +
      `${SCENES.length}: ${scene.title}`);
    if (frame === this.lastFrame) return;
    this.lastFrame = frame;
    if (this.data) this.render(frame / FPS);
    else this.ensure();
  }

  render(t) {
    const scene = sceneAt(t);
    const s = t - scene.start;
    this.stage.dataset.scene = scene.id;
    this.sceneName.textContent = `${SCENES.indexOf(scene) + 1} of ${SCENES.length} · ${scene.title}`;
    if (scene.id === "chain") this.chain(s);
    else if (scene.id === "loops") this.loops(s);
    else this.converge(s);
  }

  // Scene 1: one request a tick in each row, slowly, then faster.
  chain(s) {
    const { independent, bursty } = this.data;
    const k = Math.floor(along([[0, 0], [4, 8], [11.5, CHAIN_SQUARES]], s));
    this.showTapes(true);
    this.drawTapes([
      { lane: independent, label: "independent faults, q = 0.3", k },
      { lane: bursty, label: "bursty faults, q = 0.8", k },
    ]);
    const row = (lane) => {
      const ended = tasksEnded(lane, k);
      return { run: lane.name, requests: k, bad: `${lane.bad[k]} (${percent(lane.bad[k], k)})`,
        retries: lane.retries[k], "retries bad": `${lane.badRetries[k]} (${percent(lane.badRetries[k], lane.retries[k])})`,
        "tasks done": `${lane.done[ended]}/${ended}` };
    };
    this.fillCounters([row(independent), row(bursty)]);
    const at = CHAIN_SQUARES;
    const share = (lane) => percent(lane.badRetries[at], lane.retries[at]);
    this.setCaption(s < 4
      ? "Each square is one request of an agent task (n = 2 calls, each retried up to r = 2 times): green good, " +
        "red bad. In both rows the chain makes p = 0.3 of the requests bad in the long run."
      : s < 8
        ? "Top: independent faults, each request bad with probability 0.3. Bottom: bursty faults (q = 0.8): " +
          "after a bad request the next one is bad with probability 0.8."
        : `A retry (marked ↻) goes out right after a bad request, so in the bottom row it lands inside the burst: ` +
          `${share(bursty)} of its retries fail, against ${share(independent)} on top.`);
  }

  // Scene 2: the same tasks under naive and layered, task by task; a hold
  // on the featured task.
  loops(s) {
    const { naive, layered, featured, featuredCalls } = this.data;
    const f = featured < 0 ? 40 : featured + 1;
    const tasks = Math.floor(along([[0, 0], [6, f], [9, f], [13, LOOP_TASKS]], s));
    this.showTapes(true);
    const highlight = featured >= 0 && s >= 6 && s < 9 ? featured : -1;
    this.drawTapes([
      { lane: naive, label: "naive: SDK retries inside stream retries", k: naive.taskEnd[tasks - 1] ?? 0, highlight },
      { lane: layered, label: "layered: each fault retried at one layer", k: layered.taskEnd[tasks - 1] ?? 0,
        highlight },
    ]);
    const row = (lane) => ({ run: lane.name, tasks, requests: tasks > 0 ? lane.taskEnd[tasks - 1] : 0, done: lane.done[tasks], "correct failures": lane.envError[tasks], wrong: lane.wrong[tasks] });
    this.fillCounters([row(naive), row(layered)]);
    if (s < 4)
      this.setCaption("Slow headers in bursts, the same seeded draws for two loops. naive nests the SDK's 2 HTTP " +
        "retries inside 2 stream retries: up to 3 × 3 = 9 requests for one call.");
    else if (s < 6)
      this.setCaption("layered retries slow headers at the HTTP layer only: 3 requests, then " +
        "env_error:slow_headers, an error the caller can act on.");
    else if (s < 9 && featuredCalls && featured >= 0)
      this.setCaption(`Task ${featured}: one burst of slow headers. naive sends ${featuredCalls.naive} requests ` +
        `into it and ends in ${featuredCalls.naiveOutcome}; layered stops at ${featuredCalls.layered} ` +
        `(${featuredCalls.layeredOutcome}).`);
    else if (s < 13)
      this.setCaption("On they go, task after task, the same draws for both loops.");
    else {
      const rn = naive.taskEnd[LOOP_TASKS - 1];
      const rl = layered.taskEnd[LOOP_TASKS - 1];
      this.setCaption(`After ${LOOP_TASKS} tasks: naive sent ${rn} requests and crashed ${naive.wrong[LOOP_TASKS]} ` +
        `times; layered sent ${rl} (${percent(rn - rl, rn)} fewer) and ended ${layered.wrong[LOOP_TASKS]} tasks wrongly.`);
    }
  }

  // Scene 3: 10,000 tasks of each model; the share done against the exact value.
  converge(s) {
    const { independent, bursty, exact } = this.data;
    const tasks = Math.round(s < 6 ? along([[0, 10], [3, 400], [6, 400]], s)
      : 400 * Math.pow(CONVERGE_TASKS / 400, Math.min(1, (s - 6) / 8)));
    this.showTapes(false);
    const row = (lane, name, x) => {
      const k = lane.done[tasks];
      const sd = Math.sqrt((x * (1 - x)) / tasks);
      return { run: name, tasks, done: `${k}/${tasks}`, "share done": (k / tasks).toFixed(4), exact: prob6(x),
        "off by": `${((k / tasks - x) / sd).toFixed(2)} sd` };  // sd: the binomial's at the exact value
    };
    this.fillCounters([row(independent, "independent", exact.independent), row(bursty, "bursty", exact.bursty)]);
    this.drawConvergence(tasks);
    if (s < 3)
      this.setCaption("Thousands of seeded tasks under the simple policy: the share of tasks that finish " +
        "closes in on each model's exact value.");
    else if (s < 6)
      this.setCaption(`After 400 tasks: ${independent.done[400]}/400 and ${bursty.done[400]}/400 finished, the ` +
        `counts of the reference experiment (relsim demo, seed ${SEED}).`);
    else
      this.setCaption(`Same p = 0.3 in both, exact ${prob6(exact.independent)} against ${prob6(exact.bursty)}: ` +
        `the bursts cost ${(100 * (exact.independent - exact.bursty)).toFixed(1)} points of success, and no ` +
        `formula for independent faults sees them.`);
  }

  showTapes(on) {
    this.tapes.hidden = !on;
    this.legend.hidden = !on;
    this.chartBox.hidden = on;
  }

  setCaption(text) {
    if (this.caption.textContent !== text) this.caption.textContent = text;
  }

  fillCounters(rows) {
    const columns = Object.keys(rows[0]).map((key) => [key, key]);
    this.fillRows(this.counters, columns, rows, (row, key) => String(row[key]));
  }

  // Tapes: the last WINDOW squares of each run up to square k, newest on
  // the right; a gap between tasks, the outcome's mark after a task's
  // last square, ↻ over a retry, and a frame around the highlighted task.
  drawTapes(rows) {
    const cell = 18;
    const width = WINDOW * cell;
    const height = 64;
    const top = 20;  // the squares' top edge
    const side = cell - 4;
    const children = rows.map(({ lane, label, k, highlight = -1 }) => {
      const box = document.createElement("div");
      box.className = "tape";
      const name = document.createElement("div");
      name.className = "tape-name";
      name.textContent = label;
      const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img",
        "aria-label": `${label}: the last requests, green good, red bad` });
      const from = Math.max(0, k - WINDOW);
      let frame = null;
      for (let c = from; c < k; c++) {
        const square = lane.cells[c];
        const x = (c - from) * cell;
        const good = square.reply === "ok";
        const first = c === 0 || lane.cells[c - 1].task !== square.task;
        // Good filled, bad hollow: told apart by shape as well as colour.
        picture.append(svg("rect", { x: x + 3, y: top + 1, width: side - 2, height: side + 6, rx: 2,
          class: good ? "sq-good" : "sq-bad" }));
        if (square.retry) picture.append(svg("text", { x: x + cell / 2, y: top - 5, class: "sq-retry" }, "↻"));
        if (first && c > 0) picture.append(svg("line", { x1: x, x2: x, y1: top - 4, y2: top + side + 12, class: "sq-gap" }));
        if (first && square.task % 10 === 0)
          picture.append(svg("text", { x: x + 2, y: height - 2, class: "sq-task" }, `task ${square.task}`));
        if (square.outcome && square.outcome !== "done")
          picture.append(svg("text", { x: x + cell / 2, y: top + side / 2 + 9, class: "sq-end" },
            square.outcome.startsWith("env_error") ? "✗" : "!"));
        if (square.task === highlight) {
          frame = frame ?? { x };
          frame.end = x + cell;
        }
      }
      if (frame) picture.append(svg("rect", { x: frame.x, y: top - 3, width: frame.end - frame.x, height: side + 14,
        class: "sq-frame" }));
      box.append(name, picture);
      return box;
    });
    this.tapes.replaceChildren(...children);
  }

  drawConvergence(tasks) {
    const { independent, bursty, exact } = this.data;
    const points = [];
    for (let j = 0; j <= 120; j++) {
      const m = Math.round(Math.pow(10, 1 + (3 * j) / 120));
      if (m > tasks) break;
      points.push({ run: "independent", tasks: m, share: independent.done[m] / m });
      points.push({ run: "bursty", tasks: m, share: bursty.done[m] / m });
    }
    // The last point at the task count the table shows.
    if (tasks >= 10 && points.at(-1)?.tasks !== tasks) {
      points.push({ run: "independent", tasks, share: independent.done[tasks] / tasks });
      points.push({ run: "bursty", tasks, share: bursty.done[tasks] / tasks });
    }
    const width = Math.max(320, this.chartBox.clientWidth || 640);
    const color = { domain: ["independent", "bursty"], range: ["#0072b2", "#d55e00"] };
    const chart = Plot.plot({
      width, height: 300, marginLeft: 52, marginRight: 150,
      ariaLabel: "share of tasks done against tasks run",
      ariaDescription: `after ${tasks} tasks: independent ${independent.done[tasks]} done (exact ` +
        `${prob6(exact.independent)}), bursty ${bursty.done[tasks]} done (exact ${prob6(exact.bursty)})`,
      x: { type: "log", domain: [10, CONVERGE_TASKS], label: "tasks run", grid: true },
      y: { domain: [0.6, 1], label: "share of tasks done", grid: true },
      color,
      marks: [
        Plot.ruleY([exact.independent], { stroke: color.range[0], strokeDasharray: "6,4" }),
        Plot.ruleY([exact.bursty], { stroke: color.range[1], strokeDasharray: "6,4" }),
        Plot.text([{ y: exact.independent, label: `exact ${prob6(exact.independent)}`, run: "independent" },
          { y: exact.bursty, label: `exact ${prob6(exact.bursty)}`, run: "bursty" }],
        { x: CONVERGE_TASKS, y: "y", text: "label", fill: "run", textAnchor: "start", dx: 6, fontSize: 13 }),
        Plot.line(points, { x: "tasks", y: "share", stroke: "run", z: "run", strokeWidth: 2.5 }),
        Plot.dot(points.slice(-2), { x: "tasks", y: "share", fill: "run", r: 5 }),
      ],
    });
    this.chartBox.replaceChildren(chart);
  }
}
