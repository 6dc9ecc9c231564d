#!/usr/bin/env python3
"""A scripted model server for the real-agent tests, on 127.0.0.1, streamed:
Anthropic's Messages API (what Claude Code asks), OpenAI's Responses API
(Codex), Gemini's generateContent (Gemini CLI) and OpenAI's chat completions
(Qwen Code, Copilot CLI, opencode).

It keeps no state: each answer follows from the request. The prompt picks a
script: a phase's role section ("# Your role: plan", "implement", "review"),
or a hook walk ("# Orcho hook walk: prove" or "stubborn"). The number of
tool results already in the conversation is the step in it. A step is a
shell command to run (a tool call) or the final text.

Every request is appended, as one JSON line, to the log file given with
--log, for the test to read. The port it listens on is written to the file
given with --port-file once it listens.

Standard library only.
"""

import argparse
import json
import re
import shlex
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

# An implementer whose task says "(ask first)" first runs a command the
# profile's rules answer `ask`: a person allows or denies it, and the
# agent goes on either way.
ASK_FIRST = "(ask first)"
ASKED = "touch asked.txt"

# The rules allow every simple command: the file is written without a
# redirection, which a rule that allows asks about.
IMPLEMENT_ASKING = [
    ASKED,
    "python3 -c \"open('parse.py', 'w').write('def parse(text):\\n    return text.split() if text else []\\n')\"",
    "ORCHO verify",
    report({"schema": 1, "summary": "parse() returns [] for empty input"}),
    "text:implemented and verified",
]

# An implementer whose task says "(kill the hook)" first starts, in the
# background and in a session of its own, what kills Orcho's hook a few
# seconds later; then runs the command the rules answer `ask`, whose hook
# is waiting for a person when it is killed. Then it does the work.
KILL_FIRST = "(kill the hook)"
# Only the hooks of this run (`--profile <its checkout>/orcho.yaml`, above
# the worktree; other tests' hooks may be running on the machine), and not
# what drives opencode (`--drive`). Python, run with `exec`, so that the
# rules' allow of single commands lets it through.
KILLER = (
    "import os, time\n"
    "root = os.getcwd().split('/.orcho/')[0]\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    null = os.open(os.devnull, os.O_RDWR)\n"
    "    for fd in (0, 1, 2):\n"
    "        os.dup2(null, fd)\n"
    "    time.sleep(4)\n"
    "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "        try:\n"
    "            words = open('/proc/' + pid + '/cmdline', 'rb').read().decode().split('\\0')\n"
    "        except OSError:\n"
    "            continue\n"
    "        if 'hook' in words and '--ask-wait' in words and '--drive' not in words and root + '/orcho.yaml' in words:\n"
    "            os.kill(int(pid), 9)\n"
    "    os._exit(0)\n"
)
IMPLEMENT_KILLING = ["python3 -c " + shlex.quote("exec(" + repr(KILLER) + ")")] + IMPLEMENT_ASKING

# An implementer whose task says "(sleep first)" runs a command that does
# not end before the phase's timeout.
SLEEP_FIRST = "(sleep first)"
IMPLEMENT_SLEEPING = ["python3 -c 'import time; time.sleep(4242)'", "text:slept"]

# An implementer whose task says "(stop first)" stops before any work;
# once Orcho's stop guard refuses that stop, it does the work.
STOP_FIRST = "(stop first)"

ROLE = re.compile(r"^# Your role: ([a-z ]+)$", re.MULTILINE)
# The prompt names the `orcho` program in full: "report with `/…/orcho report".
ORCHO = re.compile(r"report with `(\S+) report ")


WALK = re.compile(r"# Orcho hook walk: ([a-z]+)")
# What Orcho's stop guard says when it refuses a stop.
REFUSED = "so do not stop yet"

# A hook walk: a failing command (logged with its exit status), one the
# rules deny, then a stop; once a stop is refused, the proof.
PROVE = ["ls no-such-file-from-the-agent", "rm -rf src"]
AFTER_REFUSAL = ["touch ok", "orcho verify test"]


ESCALATE = re.compile(r"# Orcho hook walk: escalate (\S+)")


def walk_step(mode, prompt, done):
    if mode == "escalate":
        # A write outside the workspace, asking Codex for escalated
        # permissions: its approval goes to the PermissionRequest hook.
        outside = ESCALATE.search(prompt).group(1)
        return "escalate:touch %s/escalated" % outside if done == 0 else "text:all done"
    if mode == "stubborn":
        return "text:all done, trust me"
    if done < len(PROVE):
        return PROVE[done]
    if REFUSED not in prompt:
        return "text:all done"
    rest = done - len(PROVE)
    if rest < len(AFTER_REFUSAL):
        return AFTER_REFUSAL[rest]
    return "text:all done, and proven"


def step_for(prompt, done):
    """What to do after `done` tool results, for the prompt's script; `ORCHO`
    in a step is the program the prompt names."""
    walk = WALK.search(prompt or "")
    if walk:
        return walk_step(walk.group(1), prompt, done)
    found = ROLE.search(prompt or "")
    if not found:
        return "text:no role in the prompt"
    script = SCRIPTS.get(found.group(1).strip(), ["text:nothing scripted for this role"])
    if found.group(1).strip() == "implement" and ASK_FIRST in prompt:
        script = IMPLEMENT_ASKING
    if found.group(1).strip() == "implement" and KILL_FIRST in prompt:
        script = IMPLEMENT_KILLING
    if found.group(1).strip() == "implement" and SLEEP_FIRST in prompt:
        script = IMPLEMENT_SLEEPING
    if found.group(1).strip() == "implement" and STOP_FIRST in prompt and REFUSED not in prompt:
        return "text:done, I think"
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
        if path.endswith("/chat/completions"):
            return self.openai_chat(body)
        if path.endswith(":countTokens"):
            return self.json({"totalTokens": 100})
        if path.endswith(":streamGenerateContent") or path.endswith(":generateContent"):
            return self.gemini(body, stream=path.endswith(":streamGenerateContent"))
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

    def data_stream(self, docs, done=False):
        """Server-sent events without names: `data: {json}` each."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        lines = ["data: %s\n\n" % json.dumps(d) for d in docs]
        if done:
            lines.append("data: [DONE]\n\n")
        for line in lines:
            chunk = line.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # --- Gemini generateContent ---------------------------------------------

    def gemini(self, body, stream):
        contents = body.get("contents") or []
        prompt = "\n".join(
            p["text"]
            for c in contents
            if c.get("role") == "user"
            for p in c.get("parts") or []
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
        done = sum(
            1 for c in contents for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p
        )
        tools = [
            f.get("name")
            for t in body.get("tools") or []
            for f in (t.get("functionDeclarations") or [])
            if isinstance(f, dict)
        ]
        step = step_for(prompt, done) if "run_shell_command" in tools else "text:ok"
        if step.startswith("text:"):
            part = {"text": step[5:]}
        else:
            part = {"functionCall": {"name": "run_shell_command", "args": {"command": step, "description": "scripted step"}}}
        doc = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
            "modelVersion": "scripted",
        }
        if stream:
            return self.data_stream([doc])
        return self.json(doc)

    # --- OpenAI chat completions --------------------------------------------

    def openai_chat(self, body):
        messages = body.get("messages") or []
        prompt = "\n".join(t for m in messages if m.get("role") == "user" for t in texts(m.get("content")))
        done = sum(1 for m in messages if m.get("role") == "tool")
        names = [
            (t.get("function") or {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)
        ]
        shell = next((n for n in names if n in ("run_shell_command", "bash", "shell")), None)
        step = step_for(prompt, done) if shell else "text:ok"
        base = {"id": "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "scripted")}
        if step.startswith("text:"):
            delta = {"role": "assistant", "content": step[5:]}
            finish = "stop"
            message = {"role": "assistant", "content": step[5:]}
        else:
            call = {
                "index": 0,
                "id": "call_" + uuid.uuid4().hex[:12],
                "type": "function",
                "function": {"name": shell, "arguments": json.dumps({"command": step, "description": "scripted step"})},
            }
            delta = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
            message = {"role": "assistant", "content": None, "tool_calls": [{k: v for k, v in call.items() if k != "index"}]}
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        if not body.get("stream"):
            return self.json(dict(base, object="chat.completion", choices=[{"index": 0, "message": message, "finish_reason": finish}], usage=usage))
        self.data_stream(
            [
                dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage),
            ],
            done=True,
        )

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
                "arguments": json.dumps(
                    {"cmd": step[len("escalate:") :], "sandbox_permissions": "require_escalated", "justification": "the walk writes outside the workspace"}
                    if step.startswith("escalate:")
                    else {"cmd": step}
                ),
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
