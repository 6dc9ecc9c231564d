#!/usr/bin/env python3
"""A scripted model server for the real-agent tests: Anthropic's Messages API
(what Claude Code asks) and OpenAI's Responses API (what Codex asks), both
streamed, on 127.0.0.1.

It keeps no state: each answer follows from the request. The prompt's role
section ("# Your role: plan", "implement", "review") picks a script; the
number of tool results already in the conversation is the step in it. A
step is a shell command to run (a tool call) or the final text.

Every request is appended, as one JSON line, to the log file given with
--log, for the test to read. The port it listens on is written to the file
given with --port-file once it listens.

Standard library only.
"""

import argparse
import json
import re
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLAN = {
    "schema": 1,
    "summary": "a plan in one step",
    "plan": {
        "goal": "Make parse() return an empty list for empty input",
        "steps": [{"role": "coder", "description": "Return [] from parse() when the text is empty"}],
        "files_affected": ["parse.py"],
        "risks": ["callers that expect None"],
    },
}

PARSER = "def parse(text):\\n    return text.split() if text else []\\n"


def report(doc):
    """`orcho report` with the document as one single-quoted word."""
    return "ORCHO report '" + json.dumps(doc) + "'"


SCRIPTS = {
    "plan": [report(PLAN), "text:planned: see the plan"],
    "implement": [
        "printf '" + PARSER + "' > parse.py",
        "ORCHO verify",
        report({"schema": 1, "summary": "parse() returns [] for empty input"}),
        "text:implemented and verified",
    ],
    "review": [
        # A write the read-only review may not make: its hooks refuse it.
        "echo 'looks fine' > REVIEW.md",
        "git status --short",
        report({"schema": 1, "verdict": "approved", "summary": "the change does what the plan says"}),
        "text:reviewed",
    ],
}

ROLE = re.compile(r"^# Your role: ([a-z ]+)$", re.MULTILINE)
# The prompt names the `orcho` program in full: "report with `/…/orcho report".
ORCHO = re.compile(r"report with `(\S+) report ")


def step_for(prompt, done):
    """What to do after `done` tool results, for the prompt's role; `ORCHO`
    in a step is the program the prompt names."""
    found = ROLE.search(prompt or "")
    if not found:
        return "text:no role in the prompt"
    script = SCRIPTS.get(found.group(1).strip(), ["text:nothing scripted for this role"])
    program = ORCHO.search(prompt)
    step = script[min(done, len(script) - 1)]
    return step.replace("ORCHO", program.group(1) if program else "orcho")


def texts(content):
    if isinstance(content, str):
        return [content]
    out = []
    for block in content or []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                out.append(block["text"])
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        body = json.dumps({"data": [], "object": "list"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        with LOCK:
            with open(ARGS.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"path": path, "body": body}) + "\n")
        if path.endswith("/messages/count_tokens"):
            return self.json({"input_tokens": 100})
        if path.endswith("/messages"):
            return self.anthropic(body)
        if path.endswith("/responses"):
            return self.openai_responses(body)
        return self.json({"error": "not scripted: " + path}, 404)

    def json(self, doc, status=200):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, data in events:
            chunk = ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # --- Anthropic Messages -------------------------------------------------

    def anthropic(self, body):
        messages = body.get("messages") or []
        prompt = "\n".join(t for m in messages if m.get("role") == "user" for t in texts(m.get("content")))
        done = sum(
            1
            for m in messages
            for b in (m.get("content") if isinstance(m.get("content"), list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
        step = step_for(prompt, done) if body.get("tools") else "text:ok"
        model = body.get("model", "scripted")
        start = {
            "type": "message_start",
            "message": {
                "id": "msg_" + uuid.uuid4().hex,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 1},
            },
        }
        if step.startswith("text:"):
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step[5:]}
            stop = "end_turn"
        else:
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex, "name": "Bash", "input": {}}
            delta = {
                "type": "input_json_delta",
                "partial_json": json.dumps({"command": step, "description": "scripted step"}),
            }
            stop = "tool_use"
        self.stream(
            [
                ("message_start", start),
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 20},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )

    # --- OpenAI Responses ---------------------------------------------------

    def openai_responses(self, body):
        items = body.get("input") or []
        prompt = "\n".join(
            t for i in items if isinstance(i, dict) and i.get("role") == "user" for t in texts(i.get("content"))
        )
        done = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")
        step = step_for(prompt, done)
        if step.startswith("text:"):
            item = {
                "type": "message",
                "id": "msg_" + uuid.uuid4().hex,
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "text": step[5:]}],
            }
        else:
            item = {
                "type": "function_call",
                "id": "fc_" + uuid.uuid4().hex,
                "status": "completed",
                "call_id": "call_" + uuid.uuid4().hex,
                "name": "exec_command",
                "arguments": json.dumps({"cmd": step}),
            }
        response = {
            "id": "resp_" + uuid.uuid4().hex,
            "object": "response",
            "status": "completed",
            "model": body.get("model", "scripted"),
            "output": [item],
            "usage": {
                "input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 20,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 120,
            },
        }
        self.stream(
            [
                ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                ("response.completed", {"type": "response.completed", "response": response}),
            ]
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    global ARGS
    ARGS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    import os

    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


ARGS = None
LOCK = threading.Lock()

if __name__ == "__main__":
    sys.exit(main())
