// The SDK alone: maxRetries 2, the SDK's timeout as a header timeout, no loop
// of its own. Each model call is client.messages.stream(...).finalMessage();
// whatever it raises escapes the task (common.mjs reports it as "crash", a 400
// as "harness_error"), and a stalled stream (the SDK has no idle timeout) is
// abandoned by the watchdog after --hang-after seconds and reported "hang".
// relsim audit infers: naive, s = 2, r = 0.
//
//   node sdk_only.mjs --server http://127.0.0.1:PORT [--concurrency 32] [--hang-after 4] [--header-timeout 1]
import { main, makeClient, runCalls, streamCall } from './common.mjs';

main((ctx, opts) => {
  const client = makeClient(ctx.baseURL, opts, ctx.progress);
  return runCalls(ctx, () => streamCall(client, ctx));
});
