// The server's JSON API (relsim ui; the contract's table): every endpoint
// answers with the CLI's own output, and errors are {"error": "one line"}.

export class ApiError extends Error {}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) search.set(key, value);
  }
  return search.toString();
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") message = body.error;
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiError(message);
}

// GET /api/NAME?params as JSON; signal (an AbortSignal) cancels it.
export async function getJson(name, params, signal) {
  const response = await fetch(`/api/${name}?${query(params)}`, { signal });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// GET /api/NAME?params as text (the sweep's CSV).
export async function getText(name, params, signal) {
  const response = await fetch(`/api/${name}?${query(params)}`, { signal });
  if (!response.ok) throw await failure(response);
  return response.text();
}

// POST /api/NAME?params with a JSON body.
export async function postJson(name, params, body, signal) {
  const response = await fetch(`/api/${name}?${query(params)}`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal,
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// GET /api/simulate/stream as server-sent events. Calls onProgress(done,
// total) as the run goes, then exactly one of onResult(json) or
// onError(message). Returns a function that closes the stream: the server
// then cancels the run at its next progress report.
export function stream(params, { onProgress, onResult, onError }) {
  const source = new EventSource(`/api/simulate/stream?${query(params)}`);
  let open = true;
  const close = () => { open = false; source.close(); };
  source.addEventListener("progress", (event) => {
    const { done, total } = JSON.parse(event.data);
    onProgress(done, total);
  });
  source.addEventListener("result", (event) => {
    close();
    onResult(JSON.parse(event.data));
  });
  // The server's `event: error` carries data; the browser's own error event
  // (the connection failed or ended) has none. Either way the stream is
  // over: EventSource would otherwise reconnect and run it again.
  source.addEventListener("error", (event) => {
    if (!open) return;
    close();
    let message = "the simulation stream ended without a result";
    if (typeof event.data === "string") {
      try { message = JSON.parse(event.data).error ?? message; } catch { message = event.data; }
    }
    onError(message);
  });
  return close;
}
