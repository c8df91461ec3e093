// The official Anthropic TypeScript SDK through relsim proxy and straight to
// an identical upstream (tests/sdk/sdk_test.cpp starts both upstreams, two
// `relsim serve` with the same plan of healthy streams, and the proxy in
// front of one): every stream's bytes, as the SDK's fetch received them, must
// be the same.
// Usage: node proxy_transparency.mjs DIRECT_PORT PROXY_PORT N. Prints one JSON
// line; exit 0 when all N pairs are byte for byte the same.
import Anthropic from '@anthropic-ai/sdk';

const [directPort, proxyPort, count] = process.argv.slice(2);
const n = Number(count);

// A fetch that hands the SDK the response and keeps a copy of its body bytes.
function capturing(sink) {
  return async (url, init) => {
    const res = await fetch(url, init);
    const [mine, theirs] = res.body.tee();
    sink.push(new Response(mine).arrayBuffer());
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

const direct = [], proxied = [];
const client = (port, sink) => new Anthropic({
  apiKey: 'relsim-test', baseURL: `http://127.0.0.1:${port}/t/0`, maxRetries: 0, timeout: 10000,
  fetch: capturing(sink),
});
const a = client(directPort, direct), b = client(proxyPort, proxied);
const ask = { model: 'relsim-mock', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

let identical = 0, bytes = 0, firstDifference = null;
for (let i = 0; i < n; i++) {
  const [x, y] = [await a.messages.stream(ask).finalMessage(), await b.messages.stream(ask).finalMessage()];
  const [p, q] = [Buffer.from(await direct[i]), Buffer.from(await proxied[i])];
  bytes += q.length;
  if (p.equals(q) && x.content[0]?.text === y.content[0]?.text) identical++;
  else if (firstDifference === null) firstDifference = { request: i, direct: p.toString().slice(0, 300), proxied: q.toString().slice(0, 300) };
}
console.log(JSON.stringify({ requests: n, identical, bytes, first_difference: firstDifference, ok: identical === n }));
process.exit(identical === n ? 0 : 1);
