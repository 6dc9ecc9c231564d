"""An SMTP server for the tests: Python's standard library only.

Listens on 127.0.0.1 (port 0: the kernel picks one, printed on the first
line of standard output) and appends one JSON line per mail to the file
given as the first argument: the envelope's sender and recipients, and the
message as received. It speaks the part of SMTP a client needs to hand
over a mail (EHLO or HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT).
"""

import json
import socketserver
import sys
import threading

LOG = sys.argv[1]
LOCK = threading.Lock()


class Handler(socketserver.StreamRequestHandler):
    def say(self, line):
        self.wfile.write((line + "\r\n").encode())
        self.wfile.flush()

    def handle(self):
        self.say("220 127.0.0.1 test SMTP")
        sender, recipients, data, in_data = None, [], [], False
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if in_data:
                if line == ".":
                    with LOCK, open(LOG, "a") as log:
                        log.write(json.dumps({
                            "from": sender,
                            "to": recipients,
                            "message": "\n".join(data),
                        }) + "\n")
                    sender, recipients, data, in_data = None, [], [], False
                    self.say("250 queued")
                else:
                    data.append(line[1:] if line.startswith("..") else line)
                continue
            verb = line[:4].upper()
            if verb in ("EHLO", "HELO"):
                self.say("250-127.0.0.1")
                self.say("250 8BITMIME")
            elif verb == "MAIL":
                sender = line.split(":", 1)[1].strip().strip("<>").split(">")[0]
                self.say("250 OK")
            elif verb == "RCPT":
                recipients.append(line.split(":", 1)[1].strip().strip("<>").split(">")[0])
                self.say("250 OK")
            elif verb == "DATA":
                in_data = True
                self.say("354 end with <CRLF>.<CRLF>")
            elif verb in ("RSET", "NOOP"):
                self.say("250 OK")
            elif verb == "QUIT":
                self.say("221 bye")
                return
            else:
                self.say("502 not implemented")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
