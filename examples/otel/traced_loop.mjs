// An agent loop on the official TypeScript SDK, traced by an OpenTelemetry
// GenAI instrumentation nobody here wrote (OpenLLMetry's
// @traceloop/instrumentation-anthropic), its spans serialised by
// @opentelemetry/otlp-transformer to OTLP/JSON: the file an OpenTelemetry
// Collector's file exporter would hold. `relsim fit --format otlp` reads it.
//
// The loop runs every task of `relsim serve --plan` (GET /control/tasks): the
// plan's `calls` model calls, each retried until a good answer, with the
// SDK's own retries off (maxRetries: 0), so each model-call span is one
// request and the spans' outcomes are the plan's draws in order. Each task's
// spans carry gen_ai.conversation.id = "task-N" (the instrumentation's
// extraAttributes), which is how fit groups them into tasks.
//
//   node traced_loop.mjs --server http://127.0.0.1:PORT --out spans.json [--concurrency 16] [--max-attempts 12]
import { writeFileSync } from 'node:fs';
import * as anthropic from '@anthropic-ai/sdk';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AnthropicInstrumentation } from '@traceloop/instrumentation-anthropic';

function options(argv) {
  const o = { server: '', out: '', concurrency: 16, maxAttempts: 12 };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--server') o.server = v;
    else if (k === '--out') o.out = v;
    else if (k === '--concurrency') o.concurrency = Number(v);
    else if (k === '--max-attempts') o.maxAttempts = Number(v);
    else throw new Error(`unknown option ${k}: use --server URL --out FILE [--concurrency N] [--max-attempts K]`);
  }
  if (!o.server || !o.out) throw new Error('give --server URL and --out FILE');
  if (!(o.concurrency >= 1) || !(o.maxAttempts >= 1)) throw new Error('--concurrency and --max-attempts must be >= 1');
  return o;
}

const opts = options(process.argv.slice(2));
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const instrumentation = new AnthropicInstrumentation({ traceContent: false });
instrumentation.setTracerProvider(provider);
// SDK 1.x has dropped the legacy Completions resource, which this version of
// the instrumentation also patches: it gets a stand-in for that one only;
// Messages (and Beta.Messages) are the SDK's own.
instrumentation.manuallyInstrument({
  ...anthropic,
  Anthropic: Object.assign(Object.create(anthropic.Anthropic), {
    Completions: anthropic.Anthropic.Completions ?? class { create() {} },
    Messages: anthropic.Anthropic.Messages,
    Beta: anthropic.Anthropic.Beta,
  }),
});

const listing = await (await fetch(`${opts.server}/control/tasks`)).json();
const calls = listing.calls ?? 1;
const ask = (task) => ({
  model: 'relsim-mock',
  max_tokens: 64,
  stream: true,
  messages: [{ role: 'user', content: 'hello' }],
  extraAttributes: { 'gen_ai.conversation.id': `task-${task}` },
});

// One request: a streamed create, read to the end. False on any error.
async function request(client, task) {
  try {
    const stream = await client.messages.create(ask(task));
    let stopped = false;
    for await (const event of stream) if (event.type === 'message_stop') stopped = true;
    return stopped;
  } catch {
    return false;
  }
}

async function runTask({ task, base_url }) {
  const client = new anthropic.Anthropic({ apiKey: 'relsim-test', baseURL: base_url, maxRetries: 0, timeout: 5000, logLevel: 'off' });
  for (let call = 0; call < calls; call++) {
    let ok = false;
    for (let k = 0; k < opts.maxAttempts && !ok; k++) ok = await request(client, task);
    if (!ok) return;  // the plan lists no more for this task
  }
}

const queue = [...listing.tasks];
await Promise.all(Array.from({ length: opts.concurrency }, async () => {
  while (queue.length) await runTask(queue.shift());
}));
await provider.forceFlush();
const spans = exporter.getFinishedSpans();
writeFileSync(opts.out, Buffer.from(JsonTraceSerializer.serializeRequest(spans)).toString('utf8') + '\n');
console.log(JSON.stringify({ tasks: listing.tasks.length, spans: spans.length }));
