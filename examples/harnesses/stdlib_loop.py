#!/usr/bin/env python3
"""A retry loop in Python's standard library only, against `relsim serve`.

The simple policy with r = 2: every model call makes up to 3 attempts, and any
failure of an attempt (a status other than 200, a reset, a stream that ends
without message_stop, an `event: error`, data that is not JSON, a read timeout,
which is both the header and the idle timeout) is retried after
min(0.5 * 2^k, 8) * (1 - U/4) seconds before the k-th retry; a call whose 3
attempts fail ends the task env_error, a 400 ends it harness_error. The SSE
stream is parsed here, line by line. relsim audit infers: simple, r = 2.

    python3 stdlib_loop.py --server http://127.0.0.1:PORT [--concurrency 32] [--timeout 1]

Reads GET /control/tasks, runs every task (its `calls` model calls in
sequence) 32 at a time, POSTs each outcome to /control/tasks/{task}/outcome;
exit code 0 when every task was run and reported.
"""
import argparse
import http.client
import json
import random
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

RETRIES = 2
BODY = json.dumps({"model": "relsim-mock", "max_tokens": 64, "stream": True,
                   "messages": [{"role": "user", "content": "hello"}]}).encode()


class Failure(Exception):
    """An attempt failed in a way worth retrying."""


class Fatal(Exception):
    """A 400: the request itself is wrong, retrying cannot help."""


def backoff(k):
    return min(0.5 * 2 ** k, 8) * (1 - random.random() / 4)


def read_stream(resp):
    """Reads server-sent events until message_stop; returns the text."""
    event, text = None, []
    while True:
        line = resp.readline()
        if not line:
            raise Failure("stream ended without message_stop")
        line = line.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("event:"):
            event = line[6:].strip()
            continue
        if not line.startswith("data:"):
            continue  # the blank line between events
        try:
            data = json.loads(line[5:])
        except ValueError as e:
            raise Failure(f"malformed event data: {e}") from e
        if event == "error" or data.get("type") == "error":
            raise Failure(f"event: error {data.get('error', {}).get('type')}")
        if data.get("type") == "content_block_delta":
            text.append(data.get("delta", {}).get("text", ""))
        if data.get("type") == "message_stop":
            resp.read()  # the end of the chunked body, so the reply completes
            return "".join(text)


def attempt(url, timeout):
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        conn.request("POST", url.path.rstrip("/") + "/v1/messages", body=BODY,
                     headers={"content-type": "application/json"})
        resp = conn.getresponse()
        if resp.status == 400:
            raise Fatal(f"400 {resp.read()[:200]!r}")
        if resp.status != 200:
            resp.read()
            raise Failure(f"status {resp.status}")
        return read_stream(resp)
    except (OSError, http.client.HTTPException) as e:  # timeouts, resets, cut streams
        raise Failure(f"{type(e).__name__}: {e}") from e
    finally:
        conn.close()


def run_task(item, calls, timeout):
    url = urllib.parse.urlsplit(item["base_url"])
    for call in range(calls):
        for k in range(RETRIES + 1):
            try:
                attempt(url, timeout)
                break
            except Fatal as e:
                return "harness_error", f"call {call}: {e}"
            except Failure as e:
                if k == RETRIES:
                    return "env_error", f"call {call}, {RETRIES + 1} attempts: {e}"
                time.sleep(backoff(k))
    return "done", f"{calls} calls"


def control(server, method, path, body=None):
    conn = http.client.HTTPConnection(server.hostname, server.port, timeout=30)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(),
                     headers={"content-type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{method} {path}: {resp.status} {data[:200]!r}")
        return json.loads(data)
    finally:
        conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--timeout", type=float, default=1.0, help="read timeout, seconds (header and idle)")
    args = parser.parse_args()
    server = urllib.parse.urlsplit(args.server)
    listing = control(server, "GET", "/control/tasks")
    calls = listing.get("calls") or 1
    started = time.monotonic()

    def one(item):
        try:
            outcome, detail = run_task(item, calls, args.timeout)
        except Exception as e:  # a bug of this loop: say so rather than lose the task
            outcome, detail = "crash", f"{type(e).__name__}: {e}"
        try:
            control(server, "POST", f"/control/tasks/{item['task']}/outcome", {"outcome": outcome, "detail": detail})
            return outcome
        except Exception as e:
            print(f"task {item['task']}: reporting {outcome} failed: {e}", file=sys.stderr)
            return None

    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        results = list(pool.map(one, listing["tasks"]))
    counts = {}
    for r in results:
        counts[r] = counts.get(r, 0) + 1
    print(json.dumps({"tasks": len(results), "calls": calls, "outcomes": {str(k): v for k, v in counts.items()},
                      "seconds": round(time.monotonic() - started, 1)}))
    return 0 if None not in counts else 1


if __name__ == "__main__":
    sys.exit(main())
