// A chart's frame: <figure data-testid="chart-NAME"> with a caption, the
// legend and the Plot's SVG, and the CSV, PNG and SVG buttons. The panel
// gives the data (columns and rows, which the CSV holds as they are) and a
// function that draws them with Observable Plot at a given width; the frame
// redraws on resize, so the charts fit a phone's width as well as a column.

import { downloadCsv, downloadPng, downloadSvg } from "./export.js";

const frames = new Set();

export class Figure {
  // container: where the figure goes; name: "success-q" (testid chart-success-q,
  // downloads relsim-success-q.*); title and text: the caption.
  constructor(container, { name, title, text }) {
    this.name = name;
    this.element = document.createElement("figure");
    this.element.className = "chart";
    this.element.dataset.testid = `chart-${name}`;
    const caption = document.createElement("figcaption");
    this.caption = caption;
    this.setCaption(title, text);
    this.legend = document.createElement("div");
    this.legend.className = "legend";
    this.plot = document.createElement("div");
    this.plot.className = "plot";
    this.note = document.createElement("p");
    this.note.className = "note";
    this.buttons = document.createElement("div");
    this.buttons.className = "exports";
    this.buttons.append(this.button("CSV", () => this.csv()), this.button("PNG", () => this.png()),
      this.button("SVG", () => this.svgFile()));
    this.element.append(caption, this.legend, this.plot, this.note, this.buttons);
    container.append(this.element);
    this.data = null;
    this.onError = () => {};
    frames.add(this);
    this.setEnabled(false);
  }

  setCaption(title, text) {
    const heading = document.createElement("strong");
    heading.textContent = title;
    this.caption.replaceChildren(heading, document.createTextNode(` ${text}`));
  }

  button(label, action) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.setAttribute("aria-label", label);
    button.title = `download this chart's ${label === "CSV" ? "data" : "image"} as ${label}`;
    button.addEventListener("click", action);
    return button;
  }

  setEnabled(on) {
    for (const button of this.buttons.querySelectorAll("button")) button.disabled = !on;
  }

  // data: {columns, rows}; draw(width) returns Plot.plot(...).
  show(data, draw, note = "") {
    this.data = data;
    this.draw = draw;
    this.note.textContent = note;
    this.render();
  }

  clear(message = "") {
    this.data = null;
    this.draw = null;
    this.plot.replaceChildren();
    this.legend.replaceChildren();
    this.note.textContent = message;
    this.setEnabled(false);
  }

  render() {
    if (!this.draw) return;
    const width = Math.max(260, Math.floor(this.plot.clientWidth || this.element.clientWidth || 600));
    const chart = this.draw(width);
    const legend = chart.scale && chart.scale("color") ? chart.legend("color") : null;
    this.legend.replaceChildren(...(legend ? [legend] : []));
    this.plot.replaceChildren(chart);
    this.setEnabled(this.data.rows.length > 0);
  }

  svg() { return this.plot.querySelector("svg"); }

  csv() { if (this.data) downloadCsv(this.name, this.data.columns, this.data.rows); }

  svgFile() { const svg = this.svg(); if (svg) downloadSvg(this.name, svg); }

  png() { const svg = this.svg(); if (svg) downloadPng(this.name, svg, this.onError); }
}

// Charts follow the window's width (a phone turned, a column resized).
let pending = 0;
let lastWidth = window.innerWidth;
window.addEventListener("resize", () => {
  if (window.innerWidth === lastWidth) return;
  lastWidth = window.innerWidth;
  clearTimeout(pending);
  pending = setTimeout(() => { for (const frame of frames) frame.render(); }, 150);
});
