// What every panel shares: its alert for errors, its headline outputs, its
// controls and charts, and the run-once-the-controls-settle timer with
// cancellation of a run that a newer change made stale.

import { Controls } from "./controls.js";
import { Figure } from "./figure.js";

export class Panel {
  constructor(id) {
    this.section = document.getElementById(id);
    this.errorBox = this.section.querySelector('[data-testid="error"]');
    this.timer = 0;
    this.controller = null;
  }

  // The controls in the panel's [data-controls=BOX] element (the panel's id
  // by default), named under the panel's id in the address.
  controlsIn(fields, box = this.section.id) {
    return new Controls(this.section.id, this.section.querySelector(`[data-controls="${box}"]`), fields);
  }

  // A chart in the panel's [data-charts] element; a failed export shows in
  // the panel's alert.
  figure(options) {
    const figure = new Figure(this.section.querySelector(`[data-charts="${this.section.id}"]`), options);
    figure.onError = (m) => this.error(m);
    return figure;
  }

  out(testid) { return this.section.querySelector(`[data-testid="${testid}"]`); }

  setText(testid, text) { this.out(testid).textContent = text; }

  // An outcome such as "crash:slow_headers": the same text, with <wbr> after
  // the colon so that a narrow box wraps it there, not inside a word.
  setWord(testid, word) {
    const parts = String(word).split(/(?<=:)/);
    const nodes = [];
    parts.forEach((part, i) => {
      nodes.push(document.createTextNode(part));
      if (i < parts.length - 1) nodes.push(document.createElement("wbr"));
    });
    this.out(testid).replaceChildren(...nodes);
  }

  // A table's head from columns [[key, title], ...] and one row per item of
  // rows: cell(row, key) in each cell (marked data-key), rowClass(row) the
  // row's class.
  fillRows(table, columns, rows, cell, rowClass = () => "") {
    const head = document.createElement("tr");
    for (const [, title] of columns) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = title;
      head.append(th);
    }
    table.tHead.replaceChildren(head);
    table.tBodies[0].replaceChildren(...rows.map((row) => {
      const tr = document.createElement("tr");
      tr.className = rowClass(row);
      for (const [key] of columns) {
        const td = document.createElement("td");
        td.textContent = cell(row, key);
        td.dataset.key = key;
        tr.append(td);
      }
      return tr;
    }));
  }

  // One line from the API or the page's own checks; null clears it.
  error(message) {
    this.errorBox.textContent = message ?? "";
    this.errorBox.hidden = !message;
  }

  // Runs work(signal) 150 ms after the last call (a slider dragged sends many
  // changes; only where it stops is computed). A newer call aborts the
  // signal of the older run, so its late answers are dropped.
  debounce(work, delay = 150) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.now(work), delay);
  }

  now(work) {
    clearTimeout(this.timer);
    if (this.controller) this.controller.abort();
    this.controller = new AbortController();
    const signal = this.controller.signal;
    Promise.resolve(work(signal)).catch((err) => {
      if (signal.aborted || err.name === "AbortError") return;
      this.error(err.message);
    });
  }
}
