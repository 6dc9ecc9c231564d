"""A webhook receiver for the tests: Python's standard library only.

Listens on 127.0.0.1 (port 0: the kernel picks one, printed on the first
line of standard output), checks each request's signature with the secret
in RECEIVER_SECRET, and appends one JSON line per request to the file given
as the first argument: the path, the headers Orcho sets, the body, and
whether the signature held. The path says how to answer: `/ok` 200,
`/fail` 500, `/slow` 200 after 5 seconds.
"""

import hashlib
import hmac
import http.server
import json
import os
import sys
import threading
import time

LOG = sys.argv[1]
SECRET = os.environ["RECEIVER_SECRET"].encode()
LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        timestamp = self.headers.get("X-Orcho-Timestamp", "")
        signature = self.headers.get("X-Orcho-Signature", "")
        expected = "sha256=" + hmac.new(
            SECRET, timestamp.encode() + b"." + body, hashlib.sha256
        ).hexdigest()
        fresh = timestamp.isdigit() and abs(time.time() - int(timestamp)) < 300
        record = {
            "path": self.path,
            "event": self.headers.get("X-Orcho-Event"),
            "delivery": self.headers.get("X-Orcho-Delivery"),
            "content_type": self.headers.get("Content-Type"),
            "signed": hmac.compare_digest(expected, signature) and fresh,
            "body": json.loads(body),
        }
        with LOCK, open(LOG, "a") as log:
            log.write(json.dumps(record) + "\n")
        if self.path == "/slow":
            time.sleep(5)
        status = 500 if self.path == "/fail" else 200
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"down for maintenance" if status == 500 else b"ok")

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
