// One colour per outcome and per reply on every chart, so that "crash" is
// the same red in the policies' bars, the requests histogram and the
// timeline. Chosen to stay apart for the common colour-vision deficiencies
// (Okabe and Ito's palette) and on a white background.

export const OUTCOMES = ["done", "env_error", "crash", "hang", "wrong"];
const OUTCOME_COLORS = ["#009e73", "#e69f00", "#d55e00", "#6a3d9a", "#cc79a7"];
const OTHER = ["#0072b2", "#56b4e9", "#f0e442", "#999999", "#000000", "#882255", "#44aa99"];

// The colour scale of outcome words present in the data, known ones first.
export function outcomeScale(words) {
  const known = OUTCOMES.filter((w) => words.includes(w));
  const rest = [...new Set(words.filter((w) => !OUTCOMES.includes(w)))].sort();
  const domain = [...known, ...rest];
  const range = domain.map((w, i) =>
    OUTCOMES.includes(w) ? OUTCOME_COLORS[OUTCOMES.indexOf(w)] : OTHER[(i - known.length) % OTHER.length]);
  return { domain, range };
}

// Replies on the timeline: "ok" green, each fault kind its own colour.
export function replyScale(words) {
  const faults = [...new Set(words.filter((w) => w !== "ok"))].sort();
  const domain = words.includes("ok") ? ["ok", ...faults] : faults;
  const palette = ["#d55e00", "#0072b2", "#e69f00", "#cc79a7", "#56b4e9", "#6a3d9a", "#999999", "#882255"];
  const range = domain.map((w, i) => (w === "ok" ? "#009e73" : palette[(i - (words.includes("ok") ? 1 : 0)) % palette.length]));
  return { domain, range };
}

// "crash:slow_headers" -> "crash": the class of an outcome.
export function outcomeClass(key) {
  const colon = key.indexOf(":");
  return colon < 0 ? key : key.slice(0, colon);
}
