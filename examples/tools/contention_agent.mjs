// An agent for `relsim contention run --agent-cmd` (docs/contention.md,
// "Your own agent"), on the official MCP TypeScript SDK (pinned by this
// folder's package-lock.json). It is written in a third style, between
// relsim's two reference agents, as a team might write one: it puts its
// tenant in every key, scope, lock and queue name (so nothing leaks between
// tenants), takes locks in name order with a TTL, but updates the counter by
// reading and then writing (no compare-and-set), writes a record as two keys,
// and takes the first result its queue delivers.
//
//   node contention_agent.mjs --mcp URL --tenant T --agent A --scenario S [--increments K] [--burst-calls C]
//                             [--model URL]
//
// With --model (relsim's {model_url}), it first asks the model for a plan:
// one streaming Messages request, read to its message_stop, with Node's
// own fetch (a stream that ends without it is a task not done).
//
// It prints one JSON line, {"done": bool, "stale": bool}, and exits 0 when
// it did its task.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, word, i, all) => (word.startsWith('--') ? [...pairs, [word.slice(2), all[i + 1]]] : pairs), []));
for (const need of ['mcp', 'tenant', 'agent', 'scenario'])
  if (!args[need]) {
    console.error(`contention_agent: --${need} is required`);
    process.exit(2);
  }
const { tenant, agent, scenario } = args;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const client = new Client({ name: `contention-${agent}`, version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(args.mcp)));

// A tool's JSON answer; a 429 (the SDK throws for a status that is not 2xx) is {quota: true}.
async function call(name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return JSON.parse(r.content?.[0]?.text ?? 'null') ?? {};
  } catch (e) {
    if (String(e?.message ?? e).includes('429')) return { quota: true };
    throw e;
  }
}

async function take(lock) {
  for (;;) {
    const r = await call('lock_acquire', { name: lock, ttl_ms: 2000 });
    if (r.acquired) return r.token;
    await sleep(5);
  }
}

const tasks = {
  async interleaved() {
    const key = `${tenant}:counter`;
    for (let k = 0; k < Number(args.increments ?? 10); ++k) {
      const got = await call('scratch_get', { key });
      await call('scratch_put', { key, value: String(Number(got.value ?? 0) + 1) });
    }
    const [a, b] = [`${tenant}:inventory`, `${tenant}:ledger`];
    const ta = await take(a);
    const tb = await take(b);
    await call('lock_release', { name: b, token: tb });
    await call('lock_release', { name: a, token: ta });
    return { done: true };
  },
  async 'probe-pairs'() {
    const scope = `${tenant}:faq`;
    const truth = `${tenant}: the limit is ${1000 * (Number(tenant.slice(1)) + 1)} USD`;
    let right = true;
    for (const query of ['What is the account limit for my account?', "what's the account limit for my account"]) {
      const r = await call('cache_get', { scope, query });
      if (r.hit) right &&= r.answer === truth;
      else await call('cache_put', { scope, query, answer: truth });
    }
    return { done: right };
  },
  async 'crash-mid-write'() {
    const lock = `${tenant}:profile`;
    const token = await take(lock);
    await call('scratch_put', { key: `${tenant}:profile:name`, value: agent });
    await sleep(20);  // a crash here leaves the record half written
    await call('scratch_put', { key: `${tenant}:profile:email`, value: `${agent}@${tenant}.example` });
    await call('lock_release', { name: lock, token });
    return { done: true };
  },
  async 'out-of-order'() {
    const queue = `${tenant}:${agent}:jobs`;
    const v2 = `${tenant}/${agent}/v2`;
    await call('job_submit', { queue, input: `${tenant}/${agent}/v1` });
    await call('job_submit', { queue, input: v2 });
    for (;;) {
      const r = await call('job_next', { queue });
      if (r.ticket !== null && r.ticket !== undefined) return { done: r.input === v2, stale: r.input !== v2 };
      await sleep(2);
    }
  },
  async burst() {
    for (let k = 0; k < Number(args['burst-calls'] ?? 20); ++k)
      if ((await call('add', { a: k, b: 1 })).quota) return { done: false };
    return { done: true };
  },
};

if (!tasks[scenario]) {
  console.error(`contention_agent: --scenario ${scenario} is not one of ${Object.keys(tasks).join(', ')}`);
  process.exit(2);
}

// The plan: a streamed answer, complete only with its message_stop event.
async function plan() {
  const r = await fetch(`${args.model}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'relsim-mock', max_tokens: 64, stream: true,
                           messages: [{ role: 'user', content: `Plan ${scenario} for ${tenant}/${agent}` }] }),
  });
  return r.ok && (await r.text()).includes('event: message_stop');
}

const report = args.model && !(await plan()) ? { done: false } : await tasks[scenario]();
console.log(JSON.stringify({ done: report.done, stale: report.stale ?? false }));
await client.close();
process.exit(report.done ? 0 : 1);
