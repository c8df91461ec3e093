#!/usr/bin/env python3
"""An HTTPS model API for relsim proxy's TLS tests (tests/live/proxy_tls_test.cpp).

   python3 tls_upstream.py CERT.pem KEY.pem

Listens on https://127.0.0.1:PORT (a free port) with the given certificate,
prints "listening on https://127.0.0.1:PORT" and answers every POST
/v1/messages with the same eight-event stream (content-length framed), until
killed. Loopback only.
"""
import http.server
import ssl
import sys

EVENTS = [
    ("message_start", '{"type":"message_start","message":{"id":"msg_tls","type":"message","role":"assistant",'
                      '"model":"tls-upstream","content":[],"stop_reason":null,"stop_sequence":null,'
                      '"usage":{"input_tokens":5,"output_tokens":1}}}'),
    ("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
    ("ping", '{"type":"ping"}'),
    ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello "}}'),
    ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"over TLS."}}'),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    ("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
                      '"usage":{"output_tokens":3}}'),
    ("message_stop", '{"type":"message_stop"}'),
]
BODY = "".join(f"event: {name}\ndata: {data}\n\n" for name, data in EVENTS).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200 if self.path == "/v1/messages" else 404)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening on https://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
