// The guarded tool-call harness of the lab (examples/tools/README.md): the
// same SDK calls as naive.mjs with a check at each stage a tool call passes,
// so that a failure is caught where it happens and says so:
//   service    the tool's name must be one of tools/list (asked once);
//   validate   the arguments must fit the tool's inputSchema (Ajv, before
//              anything is sent), naming the parameter, expected and got;
//   transport  a time budget per call (an AbortSignal.timeout of its own,
//              not the SDK's timeout), and the HTTP exchange itself;
//   exec       a result with isError: true is a failure, not an answer;
//   truncation a result shorter than the tool promises (dump asked for n
//              characters; note_write's whole confirmation) is passed on
//              marked truncated, never as good.
// A call with a side effect (note_write) first writes an undo record, a JSON
// file in a journal folder outside the sandbox with the file's previous
// content (or its absence, and the folders the write may create); when the
// call fails the record is replayed (the file restored or removed) and the
// outcome says rollback "done" ("failed" if the replay could not finish);
// when it succeeds the record is dropped. A call whose answer never came may
// still run on the server after the replay: this harness cannot see that.
//
// await guarded(client, { budgetMs, sandbox, journal }) -> { call(toolCall) },
// call resolving to the outcome lab.mjs prints:
// { accepted, text, error, stage, facts, rollback, truncated, sent }.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, rmdirSync, unlinkSync,
  writeFileSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import Ajv from 'ajv';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { messageOf, resultText } from './harness.mjs';

// A failure caught at `stage`, with the facts it knows (stage, tool,
// parameter, expected, got: only those it really has).
class CaughtError extends Error {
  constructor(stage, facts, detail) {
    super(`${stage}: ${facts.tool}: ${detail}`);
    this.stage = stage;
    this.facts = { stage, ...facts };
  }
}

// What a tool promises about its result beyond the schema: a check of the
// result text against the arguments, null when it holds, else [expected, got].
// note_write promises its confirmation, "wrote N characters to PATH", whole.
const PROMISES = {
  dump: (args, text) => (text.length < args.n ? [String(args.n), String(text.length)] : null),
  note_write: (args, text) => {
    const promised = `wrote ${args.text.length} characters to ${args.path}`;
    return text === promised ? null : [String(promised.length), String(text.length)];
  },
};

function jsonType(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// Ajv's first error as {parameter, expected, got}.
function argumentFacts(error, args) {
  const parameter = error.instancePath.split('/')[1] ?? error.params.missingProperty ?? error.params.additionalProperty;
  const value = args?.[parameter];
  switch (error.keyword) {
    case 'type': return { parameter, expected: String(error.params.type), got: jsonType(value) };
    case 'required': return { parameter: error.params.missingProperty, expected: 'present', got: 'missing' };
    case 'additionalProperties':
      return { parameter: error.params.additionalProperty, expected: 'no such parameter', got: 'present' };
    default: return { parameter, expected: error.message, got: JSON.stringify(value) };
  }
}

function writeDurably(path, text) {
  const fd = openSync(path, 'w');
  try { writeSync(fd, text); fsyncSync(fd); } finally { closeSync(fd); }
}

// The undo journal: one record per side-effecting call in flight.
class Journal {
  constructor(dir, sandbox) {
    this.dir = resolve(dir);
    this.sandbox = resolve(sandbox);
    const rel = relative(this.sandbox, this.dir);
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel)))
      throw new Error(`the journal ${this.dir} must be outside the sandbox ${this.sandbox}`);
    mkdirSync(this.dir, { recursive: true });
    this.count = 0;
  }

  // The sandbox file a tool path names, or null when it is outside the sandbox.
  file(path) {
    if (typeof path !== 'string' || path === '' || isAbsolute(path)) return null;
    const file = resolve(this.sandbox, path);
    return file.startsWith(this.sandbox + sep) ? file : null;
  }

  // Writes the undo record for a write to `file` before the write happens.
  record(tool, path, file) {
    const existed = existsSync(file);
    const created = [];  // folders the write would create, deepest first
    for (let d = dirname(file); d !== this.sandbox && !existsSync(d); d = dirname(d)) created.push(d);
    const record = { tool, path, file, existed, previous: existed ? readFileSync(file, 'utf8') : null,
                     created_dirs: created, at: new Date().toISOString() };
    const name = join(this.dir, `${process.pid}-${++this.count}.undo.json`);
    writeDurably(name, JSON.stringify(record));
    return name;
  }

  // Puts the sandbox back as the record says; true when it is back.
  replay(name) {
    try {
      const record = JSON.parse(readFileSync(name, 'utf8'));
      if (record.existed) writeDurably(record.file, record.previous);
      else if (existsSync(record.file)) unlinkSync(record.file);
      for (const d of record.created_dirs) if (existsSync(d) && readdirSync(d).length === 0) rmdirSync(d);
      unlinkSync(name);
      return true;
    } catch {
      return false;  // the record stays for a later replay
    }
  }

  drop(name) { unlinkSync(name); }
}

export async function guarded(client, { budgetMs, sandbox, journal }) {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const ajv = new Ajv({ strict: false, allErrors: false });
  const validators = new Map();
  const undo = new Journal(journal, sandbox);

  async function send(name, args) {
    const signal = AbortSignal.timeout(budgetMs);
    try {
      return await client.callTool({ name, arguments: args }, undefined, { signal });
    } catch (error) {
      if (signal.aborted) throw new CaughtError('transport', { tool: name }, `no answer within the budget of ${budgetMs} ms`);
      if (error instanceof McpError) {
        // The server refused the call (JSON-RPC error): a name it does not
        // know is a service fault, other invalid params a validation fault.
        if (error.code === -32602 && /unknown tool/i.test(error.message))
          throw new CaughtError('service', { tool: name }, error.message);
        if (error.code === -32602) throw new CaughtError('validate', { tool: name }, error.message);
        throw new CaughtError('exec', { tool: name }, error.message);
      }
      throw new CaughtError('transport', { tool: name }, messageOf(error));
    }
  }

  // `sent` is set once the call goes to the server (the outcome's `sent`).
  async function call({ name, arguments: args }, sent) {
    const tool = byName.get(name);
    if (!tool) throw new CaughtError('service', { tool: name }, `not a tool of this server (it has ${[...byName.keys()].join(', ')})`);
    if (!validators.has(name)) validators.set(name, ajv.compile(tool.inputSchema ?? { type: 'object' }));
    const validate = validators.get(name);
    if (!validate(args ?? {})) {
      const f = argumentFacts(validate.errors[0], args);
      throw new CaughtError('validate', { tool: name, ...f },
        `parameter ${f.parameter}: expected ${f.expected}, got ${f.got}` + (f.parameter in (args ?? {}) ? ` (${JSON.stringify(args[f.parameter])})` : ''));
    }
    let record = null;
    if (name === 'note_write') {
      const file = undo.file(args.path);
      if (!file) throw new CaughtError('validate', { tool: name, parameter: 'path', expected: 'a relative path inside the sandbox', got: args.path },
        `parameter path: expected a relative path inside the sandbox, got ${JSON.stringify(args.path)}`);
      record = undo.record(name, args.path, file);
    }
    try {
      sent.value = true;
      const result = await send(name, args);
      const text = resultText(result);
      if (result.isError) throw new CaughtError('exec', { tool: name }, text);
      const broken = PROMISES[name]?.(args, text);
      if (broken) {
        const [expected, got] = broken;
        const e = new CaughtError('truncation', { tool: name, expected, got }, `asked for ${expected} characters, got ${got}`);
        e.text = text;
        throw e;  // a call reported failed is undone like any other
      }
      if (record) undo.drop(record);
      record = null;
      return text;
    } catch (error) {
      if (record) error.rollback = undo.replay(record) ? 'done' : 'failed';
      throw error;
    }
  }

  return {
    async call(toolCall) {
      const sent = { value: false };
      try {
        const text = await call(toolCall, sent);
        return { accepted: true, text, error: null, stage: null, facts: null, rollback: 'none', truncated: false,
                 sent: sent.value };
      } catch (error) {
        if (!(error instanceof CaughtError)) throw error;  // a bug of the harness: let it show
        return { accepted: false, text: error.text ?? null, error: error.message, stage: error.stage, facts: error.facts,
                 rollback: error.rollback ?? 'none', truncated: error.stage === 'truncation', sent: sent.value };
      }
    },
  };
}
