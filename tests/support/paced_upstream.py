#!/usr/bin/env python3
"""A model API written apart from relsim, for the replay's round trip
(tests/live/replay_test.cpp, docs/replay.md).

   python3 paced_upstream.py

Listens on http://127.0.0.1:PORT (a free port), prints "listening on
http://127.0.0.1:PORT" and answers every POST to a path ending in
/v1/messages (the Messages API's event stream) or /v1/chat/completions
(OpenAI's chunks, then [DONE]) until killed. The answer is chunked, one
event a chunk, paced by its own schedule: the first event after 4 ms, then
gaps that cycle through 1, 6, 3, 9 and 2 ms, so that a replay's timing has
something to keep. The text names the request's last message, so every
request gets its own answer. Loopback only; nothing of relsim's is used.
"""
import http.server
import json
import socket
import time

FIRST_MS = 4
GAPS_MS = [1, 6, 3, 9, 2]


def anthropic_events(text):
    words = text.split(" ")
    events = [("message_start", {"type": "message_start",
                                 "message": {"id": "msg_py", "type": "message", "role": "assistant",
                                             "model": "py-upstream", "content": [], "stop_reason": None,
                                             "stop_sequence": None, "usage": {"input_tokens": 7, "output_tokens": 1}}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}),
              ("ping", {"type": "ping"})]
    for i, word in enumerate(words):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": word + (" " if i + 1 < len(words) else "")}}))
    events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                  "usage": {"output_tokens": len(words)}}),
               ("message_stop", {"type": "message_stop"})]
    return [f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n" for name, data in events]


def openai_events(text):
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-py", "object": "chat.completion.chunk", "created": 1765000000, "model": "py-upstream",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    words = text.split(" ")
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": w + (" " if i + 1 < len(words) else "")}) for i, w in enumerate(words)]
    chunks.append(chunk({}, "stop"))
    return [f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks] + ["data: [DONE]\n\n"]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):
        started = time.monotonic()
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        asked = body.get("messages", [{}])[-1].get("content", "")
        text = f"You said {asked} and this is the answer"
        if self.path.endswith("/v1/messages"):
            events = anthropic_events(text)
        elif self.path.endswith("/v1/chat/completions"):
            events = openai_events(text)
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("x-upstream", "python")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        at_ms = FIRST_MS
        for i, event in enumerate(events):
            wait = started + at_ms / 1000.0 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            data = event.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            at_ms += GAPS_MS[i % len(GAPS_MS)]
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
