// Number formats of the headline figures: the browser tests compare these
// strings exactly (contract: the page), so they live in one place.

// 0.946729: success probabilities, six decimals.
export function prob6(x) {
  return Number.isFinite(x) ? x.toFixed(6) : "–";
}

// [0.7316, 0.8132]: a Wilson interval, four decimals.
export function interval4(low, high) {
  return `[${low.toFixed(4)}, ${high.toFixed(4)}]`;
}

// Seconds to three significant digits: 1.86 s, 0.005 s, 546 s.
export function seconds(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return `${Number(x.toPrecision(3))} s`;
}

// A short form for tooltips and tables.
export function short(x) {
  if (typeof x !== "number") return String(x ?? "");
  if (Number.isInteger(x)) return String(x);
  return x.toPrecision(4).replace(/\.?0+$/, "");
}

// One CSV field: quoted when it holds a comma, a quote or a line break.
export function csvField(value) {
  const text = value === null || value === undefined ? "" : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// Rows of objects to CSV with a header row, in the given column order.
export function toCsv(columns, rows) {
  const lines = [columns.join(",")];
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(","));
  return lines.join("\n") + "\n";
}

// The CLI's CSV (relsim sweep): a header row, no quoted fields with commas
// in the columns the page reads. Written by hand because d3-dsv's parser
// compiles a row function with `new Function`, which the page's CSP forbids.
export function parseCsv(text) {
  const lines = text.split(/\r?\n/).filter((line) => line.length > 0);
  if (lines.length === 0) return [];
  const header = lines[0].split(",");
  return lines.slice(1).map((line) => {
    const cells = line.split(",");
    const row = {};
    header.forEach((name, i) => {
      const cell = cells[i] ?? "";
      const number = Number(cell);
      row[name] = cell === "" ? null : Number.isNaN(number) ? cell : number;
    });
    return row;
  });
}
