// An agent loop on an official TypeScript SDK, traced, its spans serialised
// by @opentelemetry/otlp-transformer to OTLP/JSON: the file an OpenTelemetry
// Collector's file exporter would hold. `relsim fit --format otlp` reads it.
//
// --dialect anthropic (the default): the Anthropic SDK on /v1/messages, with
// one of two tracers, neither written here (--tracing):
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
// --dialect openai: the openai SDK on /t/{task}/v1/chat/completions (the
// mock's OpenAI dialect), which has no tracing of its own, traced by
//   otel         OpenTelemetry's own @opentelemetry/instrumentation-openai
//                (the only --tracing for this dialect), with the SDK's
//                retries off (maxRetries: 0: a span covers one create(),
//                retries included, and records none of them), so each
//                model-call span is one request. It has no option for extra
//                attributes: gen_ai.conversation.id = "task-N" is set by a
//                span processor at the span's start (the instrumentation
//                starts it synchronously inside create()).
//                What it records (docs/fit.md): an error before the stream
//                as status ERROR with error.type = the SDK's error class
//                (RateLimitError, InternalServerError for every 5xx,
//                APIConnectionError, ...); a stream that ends without a
//                finish_reason (aborted by the loop, or none sent) with
//                status unset and gen_ai.response.finish_reasons = []. An
//                error inside the stream leaves the span unended: that
//                request is not in the file.
//
// The loop runs every task of `relsim serve --plan` (GET /control/tasks): the
// plan's `calls` model calls, each retried until a good answer (at most
// --max-attempts create() calls). A good answer is a stream read to its end
// with message_stop (anthropic) or a chunk with a finish_reason (openai). A
// stream that sends nothing for --idle-ms is aborted by the loop, as an
// agent's own idle timeout would (the SDKs' `timeout` covers the request only
// until the response headers).
//
//   node traced_loop.mjs --server http://127.0.0.1:PORT --out spans.json [--dialect anthropic|openai]
//        [--tracing openllmetry|sdk|otel] [--sdk-retries 2] [--concurrency 16] [--max-attempts 12] [--idle-ms 1000]
import { writeFileSync } from 'node:fs';
import { metrics } from '@opentelemetry/api';
import * as anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AnthropicInstrumentation } from '@traceloop/instrumentation-anthropic';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';

const TRACERS = { anthropic: ['openllmetry', 'sdk'], openai: ['otel'] };

function options(argv) {
  const o = { server: '', out: '', dialect: 'anthropic', tracing: '', sdkRetries: 2, concurrency: 16, maxAttempts: 12, idleMs: 1000 };
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--server') o.server = v;
    else if (k === '--out') o.out = v;
    else if (k === '--dialect') o.dialect = v;
    else if (k === '--concurrency') o.concurrency = Number(v);
    else if (k === '--max-attempts') o.maxAttempts = Number(v);
    else if (k === '--tracing') o.tracing = v;
    else if (k === '--sdk-retries') o.sdkRetries = Number(v);
    else if (k === '--idle-ms') o.idleMs = Number(v);
    else throw new Error(`unknown option ${k}: use --server URL --out FILE [--dialect anthropic|openai] ` +
                         '[--tracing openllmetry|sdk|otel] [--sdk-retries S] [--concurrency N] [--max-attempts K] [--idle-ms MS]');
  }
  if (!o.server || !o.out) throw new Error('give --server URL and --out FILE');
  if (!(o.dialect in TRACERS)) throw new Error(`--dialect ${o.dialect}: use anthropic or openai`);
  o.tracing ||= TRACERS[o.dialect][0];
  if (!TRACERS[o.dialect].includes(o.tracing))
    throw new Error(`--tracing ${o.tracing}: with --dialect ${o.dialect}, use ${TRACERS[o.dialect].join(' or ')}`);
  if (!(o.concurrency >= 1) || !(o.maxAttempts >= 1)) throw new Error('--concurrency and --max-attempts must be >= 1');
  if (!(Number.isInteger(o.sdkRetries) && o.sdkRetries >= 0 && o.sdkRetries <= 10)) throw new Error('--sdk-retries must be an integer in [0, 10]');
  if (!(o.idleMs >= 10)) throw new Error('--idle-ms must be >= 10');
  return o;
}

const opts = options(process.argv.slice(2));
const sdkTracing = opts.tracing === 'sdk';
const exporter = new InMemorySpanExporter();

// gen_ai.conversation.id for the otel tracer: the task whose create() is
// being called, set just around that synchronous call.
let callingTask = null;
const conversationIds = {
  onStart(span) {
    if (callingTask !== null) span.setAttribute('gen_ai.conversation.id', `task-${callingTask}`);
  },
  onEnd() {},
  forceFlush: async () => {},
  shutdown: async () => {},
};
const provider = new BasicTracerProvider({
  spanProcessors: [...(opts.tracing === 'otel' ? [conversationIds] : []), new SimpleSpanProcessor(exporter)],
});

if (opts.tracing === 'openllmetry') {
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
} else if (opts.tracing === 'otel') {
  // Its supported range (openai >=4.19.0 <7) is checked only by its
  // require/import hooks, which an ES module import here does not pass
  // through: its module definition patches the SDK's classes directly
  // (OpenAI.Chat.Completions.prototype.create and the like, unchanged in 7.x).
  const instrumentation = new OpenAIInstrumentation({ captureMessageContent: false });
  instrumentation.setTracerProvider(provider);
  // Its metric instruments are class fields, reset to undefined after the
  // base constructor made them: only setMeterProvider makes them again (the
  // no-op meter here; NodeSDK always calls it).
  instrumentation.setMeterProvider(metrics.getMeterProvider());
  for (const definition of instrumentation.getModuleDefinitions()) definition.patch({ OpenAI });
}

const listing = await (await fetch(`${opts.server}/control/tasks`)).json();
const calls = listing.calls ?? 1;

const askAnthropic = (task) => ({
  model: 'relsim-mock',
  max_tokens: 64,
  stream: true,
  messages: [{ role: 'user', content: 'hello' }],
  ...(sdkTracing ? {} : { extraAttributes: { 'gen_ai.conversation.id': `task-${task}` } }),
});
const askOpenai = { model: 'relsim-mock', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hello' }] };

// The stream of one create(), and whether an event of it ends the answer.
const dialects = {
  anthropic: {
    client: (baseURL) => new anthropic.Anthropic({
      apiKey: 'relsim-test',
      baseURL,
      maxRetries: sdkTracing ? opts.sdkRetries : 0,
      timeout: 5000,
      logLevel: 'off',
      ...(sdkTracing ? { openTelemetry: { tracerProvider: provider } } : {}),
    }),
    create: (client, task, signal) => client.messages.create(
      askAnthropic(task), { signal, ...(sdkTracing ? { openTelemetry: { conversationId: `task-${task}` } } : {}) }),
    ends: (event) => event.type === 'message_stop',
  },
  openai: {
    client: (baseURL) => new OpenAI({ apiKey: 'relsim-test', baseURL: `${baseURL}/v1`, maxRetries: 0, timeout: 5000, logLevel: 'off' }),
    create: (client, task, signal) => {
      callingTask = task;
      try {
        return client.chat.completions.create(askOpenai, { signal });
      } finally {
        callingTask = null;
      }
    },
    ends: (chunk) => Boolean(chunk.choices?.[0]?.finish_reason),
  },
};
const dialect = dialects[opts.dialect];

// One model call's attempt: a streamed create (with the SDK's own retries in
// sdk mode), read to the end, aborted after --idle-ms without an event.
// False on any error or a stream without its end (the openai SDK ends an
// aborted stream quietly: the abort is checked here).
async function request(client, task) {
  const controller = new AbortController();
  let timer;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), opts.idleMs);
  };
  try {
    const stream = await dialect.create(client, task, controller.signal);
    arm();
    let ended = false;
    for await (const event of stream) {
      arm();
      if (dialect.ends(event)) ended = true;
    }
    return ended && !controller.signal.aborted;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

async function runTask({ task, base_url }) {
  const client = dialect.client(base_url);
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
