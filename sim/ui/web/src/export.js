// Downloads of a chart: its data as CSV, itself as SVG (the element Plot
// drew, serialised) and as PNG (that SVG drawn on a canvas at twice its
// size). Everything goes through blob: URLs and <a download>, which the
// page's CSP allows (img-src 'self' data: blob:), so nothing is uploaded.

import { toCsv } from "./format.js";

function save(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started once click() returns; the URL can go soon after.
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function downloadCsv(name, columns, rows) {
  save(new Blob([toCsv(columns, rows)], { type: "text/csv" }), `relsim-${name}.csv`);
}

// The SVG as a standalone file: its own namespace, a white background
// (Plot draws on transparent), and its pixel size.
function svgText(svg) {
  const copy = svg.cloneNode(true);
  copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  copy.setAttribute("xmlns:xlink", "http://www.w3.org/1999/xlink");
  const { width, height } = svgSize(svg);
  copy.setAttribute("width", width);
  copy.setAttribute("height", height);
  copy.style.background = "white";
  return new XMLSerializer().serializeToString(copy);
}

function svgSize(svg) {
  const width = Number(svg.getAttribute("width")) || svg.getBoundingClientRect().width;
  const height = Number(svg.getAttribute("height")) || svg.getBoundingClientRect().height;
  return { width, height };
}

export function downloadSvg(name, svg) {
  save(new Blob([svgText(svg)], { type: "image/svg+xml" }), `relsim-${name}.svg`);
}

export function downloadPng(name, svg, onError) {
  const { width, height } = svgSize(svg);
  const url = URL.createObjectURL(new Blob([svgText(svg)], { type: "image/svg+xml" }));
  const image = new Image();
  image.onload = () => {
    const scale = 2;
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const context = canvas.getContext("2d");
    context.fillStyle = "white";
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.scale(scale, scale);
    context.drawImage(image, 0, 0, width, height);
    URL.revokeObjectURL(url);
    canvas.toBlob((blob) => {
      if (blob) save(blob, `relsim-${name}.png`);
      else onError("the browser could not encode the PNG");
    }, "image/png");
  };
  image.onerror = () => {
    URL.revokeObjectURL(url);
    onError("the browser could not draw the chart as an image");
  };
  image.src = url;
}
