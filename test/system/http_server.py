#!/usr/bin/env python3
"""http_server.py - a scripted report collector for the upload tests.

Listens on 127.0.0.1 (HTTP, or HTTPS with --tls CERT KEY), on a free port
it picks itself unless --port is given, and writes that port to
--port-file once it accepts connections.  Each request is answered by the
next step of --script (comma separated; the last step repeats):

  200, 201, 400, 500, 503 ...  that status, with a small JSON body
  429:N                         429 with "Retry-After: N"
  echo400                       400 whose body echoes the request's
                                Authorization header (a careless server)
  301                           a redirect to /elsewhere
  stall                         read the request, never answer

A GET is logged and answered 404 (a page's fetch, report_html.t).
Every request is appended to --log as one JSON line before it is answered:
{"t": seconds, "method", "path", "headers": {name: value}, "body"}.
Python standard library only.  Stops on SIGTERM or SIGINT.
"""
import argparse
import http.server
import json
import os
import signal
import ssl
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--script", default="200")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = ap.parse_args()

    steps = [s.strip() for s in args.script.split(",") if s.strip()]
    lock = threading.Lock()
    state = {"n": 0}

    def next_step():
        with lock:
            i = state["n"]
            state["n"] += 1
        return steps[min(i, len(steps) - 1)]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def reply(self, code, body, extra=()):
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n).decode("utf-8", "replace")
            rec = {"t": time.time(), "method": "POST", "path": self.path,
                   "headers": {k: v for k, v in self.headers.items()},
                   "body": body}
            with lock:
                with open(args.log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
            step = next_step()
            if step == "stall":
                time.sleep(3600)
                return
            if step.startswith("429:"):
                self.reply(429, '{"error":"slow down"}',
                           [("Retry-After", step[4:])])
            elif step == "echo400":
                auth = self.headers.get("Authorization", "")
                self.reply(400, json.dumps({"error": "bad request",
                                            "you_sent": auth}))
            elif step == "301":
                self.reply(301, "{}", [("Location", "/elsewhere")])
            else:
                code = int(step)
                self.reply(code, json.dumps({"status": code}))

        def do_GET(self):
            # report_html.t: a page that fetches (logged, answered 404)
            rec = {"t": time.time(), "method": "GET", "path": self.path,
                   "headers": {k: v for k, v in self.headers.items()},
                   "body": ""}
            with lock:
                with open(args.log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
            self.reply(404, '{"error":"not here"}')

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

        def handle_error(self, request, client_address):
            pass  # a client that refused our certificate, a stalled peer

    srv = Server(("127.0.0.1", args.port), Handler)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)

    def stop(signum, frame):
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
