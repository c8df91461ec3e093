// An agent loop on the official TypeScript SDK, traced, its spans serialised
// by @opentelemetry/otlp-transformer to OTLP/JSON: the file an OpenTelemetry
// Collector's file exporter would hold. `relsim fit --format otlp` reads it.
// Two tracers, neither written here (--tracing):
//   openllmetry  OpenLLMetry's @traceloop/instrumentation-anthropic, with the
//                SDK's own retries off (maxRetries: 0), so each model-call
//                span is one request; its spans carry gen_ai.conversation.id
//                = "task-N" through the instrumentation's extraAttributes.
//   sdk          the SDK's own tracing (its openTelemetry client option),
//                with its own retries on (--sdk-retries, default 2, the
//                SDK's default): a span is one create(), and the attempts
//                the SDK retried inside it show only as the span's
//                http.request.resend_count; gen_ai.conversation.id comes
//                from the request's openTelemetry.conversationId.
//
// The loop runs every task of `relsim serve --plan` (GET /control/tasks): the
// plan's `calls` model calls, each retried until a good answer (at most
// --max-attempts create() calls). A stream that sends nothing for --idle-ms
// is aborted by the loop, as an agent's own idle timeout would (the SDK's
// `timeout` covers the request only until the response headers).
//
//   node traced_loop.mjs --server http://127.0.0.1:PORT --out spans.json [--tracing openllmetry|sdk]
//        [--sdk-retries 2] [--concurrency 16] [--max-attempts 12] [--idle-ms 1000]
import { writeFileSync } from 'node:fs';
import * as anthropic from '@anthropic-ai/sdk';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AnthropicInstrumentation } from '@traceloop/instrumentation-anthropic';

function options(argv) {
  const o = { server: '', out: '', tracing: 'openllmetry', sdkRetries: 2, concurrency: 16, maxAttempts: 12, idleMs: 1000 };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--server') o.server = v;
    else if (k === '--out') o.out = v;
    else if (k === '--concurrency') o.concurrency = Number(v);
    else if (k === '--max-attempts') o.maxAttempts = Number(v);
    else if (k === '--tracing') o.tracing = v;
    else if (k === '--sdk-retries') o.sdkRetries = Number(v);
    else if (k === '--idle-ms') o.idleMs = Number(v);
    else throw new Error(`unknown option ${k}: use --server URL --out FILE [--tracing openllmetry|sdk] ` +
                         '[--sdk-retries S] [--concurrency N] [--max-attempts K] [--idle-ms MS]');
  }
  if (!o.server || !o.out) throw new Error('give --server URL and --out FILE');
  if (!(o.concurrency >= 1) || !(o.maxAttempts >= 1)) throw new Error('--concurrency and --max-attempts must be >= 1');
  if (o.tracing !== 'openllmetry' && o.tracing !== 'sdk') throw new Error(`--tracing ${o.tracing}: use openllmetry or sdk`);
  if (!(Number.isInteger(o.sdkRetries) && o.sdkRetries >= 0 && o.sdkRetries <= 10)) throw new Error('--sdk-retries must be an integer in [0, 10]');
  if (!(o.idleMs >= 10)) throw new Error('--idle-ms must be >= 10');
  return o;
}

const opts = options(process.argv.slice(2));
const sdkTracing = opts.tracing === 'sdk';
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
if (!sdkTracing) {
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
}

const listing = await (await fetch(`${opts.server}/control/tasks`)).json();
const calls = listing.calls ?? 1;
const ask = (task) => ({
  model: 'relsim-mock',
  max_tokens: 64,
  stream: true,
  messages: [{ role: 'user', content: 'hello' }],
  ...(sdkTracing ? {} : { extraAttributes: { 'gen_ai.conversation.id': `task-${task}` } }),
});

// One model call's attempt: a streamed create (with the SDK's own retries in
// sdk mode), read to the end, aborted after --idle-ms without an event.
// False on any error or a stream without message_stop.
async function request(client, task) {
  const controller = new AbortController();
  let timer;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), opts.idleMs);
  };
  try {
    const requestOptions = { signal: controller.signal, ...(sdkTracing ? { openTelemetry: { conversationId: `task-${task}` } } : {}) };
    const stream = await client.messages.create(ask(task), requestOptions);
    arm();
    let stopped = false;
    for await (const event of stream) {
      arm();
      if (event.type === 'message_stop') stopped = true;
    }
    return stopped && !controller.signal.aborted;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

async function runTask({ task, base_url }) {
  const client = new anthropic.Anthropic({
    apiKey: 'relsim-test',
    baseURL: base_url,
    maxRetries: sdkTracing ? opts.sdkRetries : 0,
    timeout: 5000,
    logLevel: 'off',
    ...(sdkTracing ? { openTelemetry: { tracerProvider: provider } } : {}),
  });
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
