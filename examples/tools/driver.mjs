// What the two drivers (lab.mjs, tasks.mjs) share: their common options and
// the harness they name, connected (examples/tools/README.md).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from './harness.mjs';
import { guarded } from './guarded.mjs';
import { naive } from './naive.mjs';

// The options the drivers share, --url, --harness naive|guarded, --budget-ms,
// --sandbox, --journal and --drain-ms, and a driver's own (`extra`: option ->
// key, each an integer in its [lo, hi]), read strictly: a bad one prints the
// message and `usage` on stderr and exits 2.
export function parseOptions(argv, usage, extra = {}) {
  const fail = (message) => {
    console.error(`${message}\n${usage}`);
    process.exit(2);
  };
  const opts = { url: null, harness: null, budgetMs: 1000, sandbox: null, journal: null, drainMs: 10000 };
  const names = { '--url': 'url', '--harness': 'harness', '--budget-ms': 'budgetMs', '--sandbox': 'sandbox',
                  '--journal': 'journal', '--drain-ms': 'drainMs' };
  for (const [name, { key }] of Object.entries(extra)) names[name] = key;
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (!names[name]) fail(`unknown option ${name}`);
    if (value === undefined) fail(`${name} needs a value`);
    opts[names[name]] = value;
  }
  if (!opts.url) fail('--url is required');
  if (opts.harness !== 'naive' && opts.harness !== 'guarded') fail('--harness must be naive or guarded');
  for (const key of ['budgetMs', 'drainMs']) {
    const v = Number(opts[key]);
    if (!(v >= 0) || !Number.isFinite(v)) fail(`${key} = ${opts[key]} must be a number >= 0`);
    opts[key] = v;
  }
  for (const [name, { key, lo, hi }] of Object.entries(extra)) {
    const v = Number(opts[key]);
    if (!Number.isInteger(v) || v < lo || v > hi) fail(`${name} = ${opts[key]} must be an integer in [${lo}, ${hi}]`);
    opts[key] = v;
  }
  if (opts.harness === 'guarded' && !opts.sandbox) fail('--harness guarded needs --sandbox (its undo journal)');
  return opts;
}

// Connects and sets up the harness the options name; the guarded one's undo
// journal goes to --journal or a new folder under the system's temp folder.
export async function openHarness(opts, name) {
  const { client, drain } = await connect(opts.url, name);
  const harness = opts.harness === 'naive'
    ? naive(client, { budgetMs: opts.budgetMs })
    : await guarded(client, { budgetMs: opts.budgetMs, sandbox: opts.sandbox,
                              journal: opts.journal ?? mkdtempSync(join(tmpdir(), 'relsim-tools-journal-')) });
  return { client, drain, harness };
}
