"""`orcho mcp` driven by the official Python MCP SDK over stdio.

Usage: client.py ORCHO_BINARY CHECKOUT

CHECKOUT is a committed git repository whose `orcho.yaml` has a `review`
phase that pauses on rejection, and whose `correcting.yaml` implements and
then rejects at final acceptance until `fixed` exists. Lists the tools,
drives a rejected release through `fix` to its correction follow-up, drives a
paused run through status -> evidence(findings) -> decide -> resume, and
checks the refusals.
Exits non-zero on the first failed check.
"""

import json
import asyncio
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client

TOOLS = {
    "orcho_run_start",
    "orcho_run_status",
    "orcho_run_evidence",
    "orcho_phase_handoff_decide",
    "orcho_run_resume",
    "orcho_handoff_advice",
    "orcho_review_paused_run",
    "orcho_delivery_gate",
    "orcho_delivery_decide",
    "orcho_delivery_rerun",
    "orcho_workspace_pending_decisions",
    "orcho_touchpoint",
    "orcho_touchpoint_answer",
    "orcho_intake_gate",
    "orcho_intake_decide",
    "orcho_verify",
    "orcho_status",
    "orcho_point",
    "orcho_decide",
}

# Writes `work.txt`, and `fixed` once its input carries a note about empty input.
IMPLEMENT = [
    "sh",
    "-c",
    'echo work >> work.txt; case "$ORCHO_INPUT_TEXT" in *"empty input"*) touch fixed;; esac',
]
# Rejects until `fixed` exists.
ACCEPT = ["sh", "-c", 'test -f fixed || { echo "parse() ignores empty input"; exit 1; }']

# Rejects on its first run (leaving a marker), approves after.
REVIEW_ONCE = ["sh", "-c", "test -f reviewed || { touch reviewed; exit 1; }"]


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)
    print(f"ok: {what}")


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    content = result.structuredContent
    if content is None:
        raise CheckFailed(f"{tool} returned no structured content: {result}")
    return bool(result.isError), content


async def ok(session, tool, arguments):
    refused, content = await call(session, tool, arguments)
    if refused:
        raise CheckFailed(f"{tool} was refused: {content}")
    return content


async def refused(session, tool, arguments, code):
    was_refused, content = await call(session, tool, arguments)
    check(
        was_refused and content.get("code") == code,
        f"{tool} is refused with `{code}` (got {content.get('code')!r})",
    )
    return content


ADVICE = {
    "recommended_action": "retry_feedback",
    "confidence": 0.85,
    "rationale": "the failure is specific",
    "risks": [],
    "retry_feedback": "make the check pass",
    "expected_files": ["check.txt"],
}


class FakeModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint with one answer."""

    asked = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        FakeModel.asked.append((self.path, self.headers.get("Authorization"), json.loads(body)))
        answer = json.dumps({
            "choices": [{"message": {"role": "assistant", "content": json.dumps(ADVICE)}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 60},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def start_model():
    server = HTTPServer(("127.0.0.1", 0), FakeModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def advised(session, checkout, base_url):
    """Real advice from the profile's advisor, followed by a decision."""
    with open(os.path.join(checkout, "advised.yaml"), "w") as f:
        f.write(
            "schema: 1\nname: advised\n"
            f"advisor: {{base_url: '{base_url}', model: fake, api_key_env: ORCHO_TEST_ADVISOR_KEY}}\n"
            "phases:\n  - {name: implement, role: implement}\n"
            "supervision: {plan_approval: false}\n"
        )
    started = await ok(
        session,
        "orcho_run_start",
        {"profile": "advised.yaml", "phases": {"implement": "false"}, "in_place": True},
    )
    run = started["run_id"]
    advice = await ok(session, "orcho_handoff_advice", {"run_id": run})
    check(
        advice["recommended_action"] == "retry_feedback" and advice["applied"] is False,
        f"orcho_handoff_advice returns the advisor's advice, unapplied ({advice})",
    )
    path, auth, sent = FakeModel.asked[-1]
    check(
        path == "/v1/chat/completions" and auth == "Bearer sk-test-mcp"
        and sent["response_format"]["type"] == "json_schema",
        "the advisor asked the model for structured output, with the key in the header",
    )
    review = await ok(session, "orcho_review_paused_run", {"run_id": run})
    check(
        review["proposal"]["source"] == "advice"
        and review["proposal"]["feedback"] == "make the check pass"
        and review["proposal"]["confirm_with"]["arguments"]["advice_id"] == advice["advice_id"],
        f"the review's proposal is built from the advice, and follows it ({review['proposal']})",
    )
    await refused(
        session,
        "orcho_phase_handoff_decide",
        {"run_id": run, "action": "halt", "advice_id": "0099-nope"},
        "invalid_input",
    )
    await ok(
        session,
        "orcho_phase_handoff_decide",
        {"run_id": run, "action": "halt", "advice_id": advice["advice_id"]},
    )
    # A decided halt ends the run: no resume.
    status = await ok(session, "orcho_run_status", {"run_id": run})
    check(status["status"] == "halted", "a decided halt ends the run")
    evidence = await ok(session, "orcho_run_evidence", {"run_id": run, "slice": "handoff_advice"})
    calls = evidence["handoff_advice"]["calls"]
    check(
        len(calls) == 1 and calls[0]["applied_action"] == "halt"
        and calls[0]["requested_by"] == "client",
        f"the evidence counts the call and what was applied ({calls})",
    )
    os.remove(os.path.join(checkout, "advised.yaml"))


async def follow_up(session):
    """A rejected release, `fix`, and its correction follow-up, once."""
    started = await ok(
        session,
        "orcho_run_start",
        {
            "profile": "correcting.yaml",
            "phases": {"implement": IMPLEMENT, "final_acceptance": ACCEPT},
            "task": "Parse the documents",
        },
    )
    check(started["status"] == "awaiting_phase_handoff", "final acceptance rejects")
    check(started.get("task") == "Parse the documents", f"the run keeps its task ({started})")
    parent = started["run_id"]
    await ok(
        session,
        "orcho_phase_handoff_decide",
        {"run_id": parent, "action": "continue_with_waiver", "feedback": "known gap"},
    )
    gate = await ok(session, "orcho_run_resume", {"run_id": parent})
    check(gate["status"] == "awaiting_delivery", "the waived run reaches its delivery gate")
    await refused(session, "orcho_run_start", {"parent_run_id": parent}, "refused")
    await ok(
        session,
        "orcho_delivery_decide",
        {"run_id": parent, "action": "fix", "note": "handle the empty input"},
    )
    ended = await ok(session, "orcho_run_resume", {"run_id": parent})
    check(
        ended["status"] == "completed"
        and any("parent_run_id" in step for step in ended["next"]),
        f"after `fix` the status says how to start the follow-up ({ended['next']})",
    )

    child = await ok(session, "orcho_run_start", {"parent_run_id": parent})
    check(
        child["follow_up_of"] == {"parent_run_id": parent, "generation": 1},
        f"the child names its parent and generation ({child.get('follow_up_of')})",
    )
    check(
        child["status"] == "awaiting_delivery"
        and child["meta"]["delivery_gate"]["verdict"] == "approved",
        "the note reached the child's phases, and its release is approved",
    )
    parent_status = await ok(session, "orcho_run_status", {"run_id": parent})
    check(
        not any("parent_run_id" in step for step in parent_status["next"]),
        "once started, the parent no longer offers to start it",
    )
    again = await refused(session, "orcho_run_start", {"parent_run_id": parent}, "refused")
    check(child["run_id"] in again["message"], "a second follow-up names the first")
    await refused(
        session,
        "orcho_run_start",
        {"parent_run_id": parent, "in_place": True},
        "invalid_input",
    )
    await ok(session, "orcho_delivery_decide", {"run_id": child["run_id"], "action": "skip"})
    await ok(session, "orcho_run_resume", {"run_id": child["run_id"]})


async def any_point(session):
    """Any point through the two tools every kind shares: its view, and a
    decision by an action's name, refused on a point that moved."""
    started = await ok(
        session,
        "orcho_run_start",
        {"phases": {"review": ["sh", "-c", "exit 1"]}, "in_place": True},
    )
    run = started["run_id"]
    shown = await ok(session, "orcho_point", {"run_id": run})
    point = shown["point"]
    check(point["kind"] == "handoff", "orcho_point shows the handoff")
    names = [a["name"] for a in point["actions"]]
    check("retry_feedback" in names and "halt" in names, "with its actions")
    retry = next(a for a in point["actions"] if a["name"] == "retry_feedback")
    check(
        retry["note"]["note"] == "required" and "again" in retry["does"],
        "retry_feedback says what it does and that it needs a note",
    )
    await refused(session, "orcho_decide", {"run_id": run, "action": "retry_feedback"}, "invalid_input")
    await refused(
        session,
        "orcho_decide",
        {"run_id": run, "action": "halt", "point_id": "0009-review"},
        "point_moved",
    )
    decided = await ok(
        session, "orcho_decide", {"run_id": run, "action": "halt", "point_id": point["id"]}
    )
    check(decided["recorded"] is True and decided["halted"] is True, "halt is recorded and ends the run")
    after = await ok(session, "orcho_point", {"run_id": run})
    check(after["point"] is None, "nothing waits after a halt")


async def main(orcho, checkout):
    # The SDK passes the server a few safe variables only; the receipt key's
    # data directory is the caller's.
    env = get_default_environment()
    if "XDG_DATA_HOME" in os.environ:
        env["XDG_DATA_HOME"] = os.environ["XDG_DATA_HOME"]
    env["ORCHO_TEST_ADVISOR_KEY"] = "sk-test-mcp"
    model = start_model()
    server = StdioServerParameters(
        command=orcho, args=["--checkout", checkout, "mcp"], env=env
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            check(names == TOOLS, f"the nineteen tools are listed (got {sorted(names)})")

            # Readiness from the commit's notes: the profile there requires
            # nothing, so nothing is missing.
            proof = await ok(session, "orcho_status", {"commit": "HEAD"})
            check(proof["ready"] is True and proof["required"] == [], "orcho_status by commit")

            await follow_up(session)
            await advised(session, checkout, f"http://127.0.0.1:{model.server_port}/v1")

            # A client reads no file outside the workspace, and no error
            # repeats what a file says.
            outside = await refused(
                session, "orcho_run_start", {"profile": "/etc/passwd"}, "invalid_input"
            )
            check(
                "root:" not in json.dumps(outside) and "inside the workspace" in outside["message"],
                "a profile outside the workspace is refused without echoing it",
            )
            escaping = await refused(
                session, "orcho_run_start", {"profile": "../../../../etc/passwd"}, "invalid_input"
            )
            check("root:" not in json.dumps(escaping), "a path that climbs out is refused too")

            started = await ok(
                session,
                "orcho_run_start",
                {"phases": {"review": REVIEW_ONCE}, "in_place": True},
            )
            check(started["status"] == "awaiting_phase_handoff", "the run pauses at a handoff")
            run = started["run_id"]

            status = await ok(session, "orcho_run_status", {"run_id": run})
            handoff = status["meta"]["phase_handoff"]
            check(handoff["verdict"] == "rejected", "status shows the rejected handoff")
            check("retry_feedback" in handoff["available_actions"], "retry_feedback is available")
            handoff_id = handoff["handoff_id"]

            findings = await ok(
                session, "orcho_run_evidence", {"run_id": run, "slice": "findings"}
            )
            check(
                findings["handoff"]["handoff_id"] == handoff_id
                and len(findings["handoff"]["findings"]) == 1,
                "evidence(slice=findings) has the handoff's finding",
            )

            awaiting = await refused(
                session, "orcho_run_resume", {"run_id": run}, "awaiting_decision"
            )
            check(
                awaiting["details"]["handoff_id"] == handoff_id,
                "the awaiting_decision refusal names the handoff",
            )

            decision = {
                "run_id": run,
                "handoff_id": handoff_id,
                "action": "retry_feedback",
                "feedback": "mark it reviewed",
            }
            recorded = await ok(session, "orcho_phase_handoff_decide", decision)
            check(recorded["recorded"] is True, "the decision is recorded")
            await refused(
                session,
                "orcho_phase_handoff_decide",
                {"run_id": run, "handoff_id": handoff_id, "action": "continue"},
                "decision_conflict",
            )

            resumed = await ok(session, "orcho_run_resume", {"run_id": run})
            check(resumed["status"] == "completed", f"resume completes the run ({resumed['status']})")

            await any_point(session)

            handoffs = await ok(
                session, "orcho_run_evidence", {"run_id": run, "slice": "handoffs"}
            )
            decided = handoffs["handoffs"][0]["decision"]
            check(
                decided["decided_by"] == "client" and decided.get("client", "").startswith("mcp"),
                f"the decision is recorded as the client's, named ({decided})",
            )

            await refused(
                session,
                "orcho_phase_handoff_decide",
                {"run_id": run, "handoff_id": handoff_id, "action": "halt"},
                "decision_conflict",
            )

            # A second run, halted: the same `halt` again is a replay, another
            # decision a conflict.
            started = await ok(
                session,
                "orcho_run_start",
                {"phases": {"review": "false"}, "in_place": True},
            )
            halted_run = started["run_id"]
            await ok(
                session, "orcho_phase_handoff_decide", {"run_id": halted_run, "action": "halt"}
            )
            halted = await ok(session, "orcho_run_status", {"run_id": halted_run})
            check(halted["status"] == "halted", "a halt decision ends the run")
            replay = await ok(
                session, "orcho_phase_handoff_decide", {"run_id": halted_run, "action": "halt"}
            )
            check(replay["recorded"] is False, "replaying the halt changes nothing")
            await refused(
                session,
                "orcho_phase_handoff_decide",
                {"run_id": halted_run, "action": "continue"},
                "decision_conflict",
            )
            await refused(session, "orcho_run_resume", {"run_id": halted_run}, "run_terminal")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    except CheckFailed as failed:
        print(f"FAILED: {failed}", file=sys.stderr)
        sys.exit(1)
    print("all checks passed")
