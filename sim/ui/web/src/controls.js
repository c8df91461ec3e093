// A panel's controls, built from a list of field specs so that the markup,
// the URL state and the query sent to the server come from one table.
//
// Every control's accessible name is the option's name (the browser tests
// find them by role and name): a slider and its number field share the one
// visible label and differ by role (slider vs spinbutton).
//
// A field spec: {key, kind: "range"|"number"|"select"|"checkbox"|"text"|"file",
//   value (default, as a string), min, max, step, slider: {min, max, step},
//   options: [..], hint, when: (values) => bool (shown only when true)}.

let uid = 0;

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

function numberInput(spec, id) {
  return el("input", {
    type: "number", id, min: spec.min, max: spec.max, step: spec.step ?? "any",
    value: spec.value, inputmode: spec.step === 1 ? "numeric" : "decimal",
  });
}

function inputsFor(spec, id, labelId) {
  switch (spec.kind) {
    case "range": {
      const s = spec.slider ?? spec;
      const slider = el("input", {
        type: "range", min: s.min, max: s.max, step: s.step ?? spec.step ?? "any",
        value: spec.value, "aria-labelledby": labelId,
      });
      return [slider, numberInput(spec, id)];
    }
    case "number":
      return [numberInput(spec, id)];
    case "select": {
      const select = el("select", { id });
      for (const option of spec.options) select.append(el("option", { value: option }, option));
      select.value = spec.value;
      return [select];
    }
    case "checkbox":
      return [el("input", { type: "checkbox", id })];
    case "text":
      return [el("input", { type: "text", id, value: spec.value ?? "", spellcheck: "false",
        placeholder: spec.placeholder })];
    case "file":
      return [el("input", { type: "file", id, accept: spec.accept })];
    default:
      throw new Error(`unknown control kind ${spec.kind}`);
  }
}

// One field: its label, its hint and its inputs, wired so that the slider
// and the number field of a pair follow each other.
function buildField(section, spec) {
  const id = `${section}-${spec.key}-${++uid}`;
  const labelId = `${id}-label`;
  const hintId = `${id}-hint`;
  const field = el("div", { class: `field field-${spec.kind}`, "data-key": spec.key });
  const inputs = inputsFor(spec, id, labelId);
  const label = el("label", { for: id, id: labelId, class: "name" }, spec.key);
  if (spec.kind === "checkbox") {
    label.prepend(inputs[0]);
    field.append(label);
  } else {
    field.append(label);
    const box = el("div", { class: "inputs" });
    box.append(...inputs);
    field.append(box);
  }
  if (spec.hint) {
    field.append(el("span", { class: "hint", id: hintId }, spec.hint));
    for (const input of inputs) input.setAttribute("aria-describedby", hintId);
  }
  if (spec.kind === "range") {
    const [slider, number] = inputs;
    slider.addEventListener("input", () => { number.value = slider.value; });
    number.addEventListener("input", () => { if (number.value !== "") slider.value = number.value; });
  }
  return { spec, field, inputs, main: inputs[inputs.length - 1] };
}

export class Controls {
  // section: the panel's id; container: where the fields go; specs: the table.
  constructor(section, container, specs) {
    this.section = section;
    this.fields = specs.map((spec) => buildField(section, spec));
    container.append(...this.fields.map((f) => f.field));
    this.listeners = [];
    for (const f of this.fields) {
      const event = f.spec.kind === "select" || f.spec.kind === "checkbox" || f.spec.kind === "file"
        ? "change" : "input";
      for (const input of f.inputs) input.addEventListener(event, () => this.changed(f.spec.key));
    }
    this.refreshVisibility();
  }

  onChange(listener) { this.listeners.push(listener); }

  changed(key) {
    this.refreshVisibility();
    for (const listener of this.listeners) listener(key);
  }

  find(key) { return this.fields.find((f) => f.spec.key === key); }

  get(key) {
    const f = this.find(key);
    if (f.spec.kind === "checkbox") return f.main.checked ? "1" : "";
    if (f.spec.kind === "file") return f.main.files && f.main.files[0];
    return f.main.value;
  }

  // Sets a value as read from the URL; a word that is not an option is ignored.
  set(key, value) {
    const f = this.find(key);
    if (!f || f.spec.kind === "file") return;
    if (f.spec.kind === "checkbox") { f.main.checked = value === "1" || value === "true"; return; }
    if (f.spec.kind === "select" && !f.spec.options.includes(value)) return;
    for (const input of f.inputs) input.value = value;
  }

  // Values of the shown fields (files left out), as strings.
  values() {
    const all = {};
    for (const f of this.fields) all[f.spec.key] = this.get(f.spec.key);
    const shown = {};
    for (const f of this.fields) {
      if (f.spec.kind === "file") continue;
      if (!f.spec.when || f.spec.when(all)) shown[f.spec.key] = all[f.spec.key];
    }
    return shown;
  }

  // Every field's value for the URL, shown or not, files left out.
  state() {
    const out = {};
    for (const f of this.fields) if (f.spec.kind !== "file") out[f.spec.key] = this.get(f.spec.key);
    return out;
  }

  refreshVisibility() {
    const all = {};
    for (const f of this.fields) all[f.spec.key] = this.get(f.spec.key);
    for (const f of this.fields) f.field.hidden = Boolean(f.spec.when) && !f.spec.when(all);
  }

  // The first shown number field the browser rejects, as one line naming
  // the value and the range, or null when all are valid.
  invalid() {
    for (const f of this.fields) {
      if (f.field.hidden || f.spec.kind !== "range" && f.spec.kind !== "number") continue;
      const input = f.main;
      if (input.validity.valid && input.value !== "") continue;
      const low = f.spec.min ?? "-inf";
      const high = f.spec.max ?? "inf";
      const whole = f.spec.step === 1 ? "a whole number" : "a number";
      return `${f.spec.key} = ${input.value === "" ? "(empty)" : input.value} is out of range: ` +
        `${f.spec.key} must be ${whole} in [${low}, ${high}]`;
    }
    return null;
  }
}
