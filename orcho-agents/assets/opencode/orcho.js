// Orcho for opencode: every tool call, shell result, session start and idle
// session goes to `orcho hook opencode`, which answers from this project's
// orcho.yaml. Install with `orcho init --agent opencode` (it writes this file
// to .opencode/plugins/orcho.js) or `opencode plugin <path to this folder>`.
//
// - A tool call Orcho refuses is not run: the plugin throws, and the model
//   reads the reason as the tool's result.
// - A shell command's exit status reaches Orcho's exploratory log.
// - What proves readiness here is added to the system prompt.
// - opencode has no stop that a plugin can refuse. When a session goes idle
//   while a required receipt is missing, the plugin sends Orcho's reason as
//   the next prompt, so the session goes on; Orcho bounds how many times in
//   a row. `opencode run` ends at the first idle before that prompt is
//   answered: only the TUI and `opencode serve` go on. Where Orcho runs
//   opencode for a phase, it drives `opencode run` itself and asks for each
//   stop (`ORCHO_OPENCODE_DRIVEN`): the plugin leaves idle sessions alone.
//
// `ORCHO_BIN` names the orcho program when it is not `orcho` on PATH;
// `ORCHO_HOOK`, set by Orcho for a phase it runs, is the whole hook command
// line as a JSON array. When orcho cannot be run at all, a tool call is
// refused with why, and an idle session is prompted with why at most three
// times in a row.
import { spawn } from "node:child_process";

const ORCHO = process.env.ORCHO_BIN || "orcho";
const HOOK = (() => {
  try {
    const words = JSON.parse(process.env.ORCHO_HOOK || "null");
    if (Array.isArray(words) && words.length > 0 && words.every((w) => typeof w === "string")) return words;
  } catch {}
  return [ORCHO, "hook", "opencode"];
})();
const DRIVEN = Boolean(process.env.ORCHO_OPENCODE_DRIVEN);

export const Orcho = async ({ client, directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  // Sessions whose last stop Orcho refused.
  const refused = new Set();
  let context;

  const call = (doc) =>
    new Promise((resolve) => {
      let child;
      try {
        child = spawn(HOOK[0], HOOK.slice(1), { cwd, stdio: ["pipe", "pipe", "pipe"] });
      } catch (e) {
        resolve({ code: 2, out: "", err: `orcho could not start: ${e.message}` });
        return;
      }
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      child.on("error", (e) => resolve({ code: 2, out, err: `orcho could not start: ${e.message}` }));
      child.on("close", (code) => resolve({ code: code ?? 2, out, err }));
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ cwd, ...doc }));
    });

  // Orcho's answer; anything but exit 0 with JSON (or nothing) refuses.
  // `failed` marks a refusal Orcho did not make itself (it could not start,
  // or answered nothing it could read).
  const answer = async (doc) => {
    const r = await call(doc);
    if (r.code !== 0) {
      const reason = r.err.trim() || `orcho hook exited with ${r.code}`;
      return { decision: "deny", reason, failed: !r.err.startsWith("orcho hook:") };
    }
    if (!r.out.trim()) return {};
    try {
      return JSON.parse(r.out);
    } catch {
      return { decision: "deny", reason: "orcho hook answered something that is not JSON", failed: true };
    }
  };
  // Stops refused in a row because Orcho itself did not answer: Orcho
  // bounds its own refusals, these the plugin bounds.
  const failures = new Map();
  const MAX_FAILURES = 3;

  return {
    "tool.execute.before": async (input, output) => {
      const said = await answer({
        hook_event_name: "PreToolUse",
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: output.args ?? {},
      });
      if (said.decision === "deny") throw new Error(said.reason);
    },

    "tool.execute.after": async (input, output) => {
      if (input.tool !== "bash") return;
      await call({
        hook_event_name: "PostToolUse",
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: input.args ?? {},
        tool_response: { exit_code: output?.metadata?.exit ?? null },
      });
    },

    "experimental.chat.system.transform": async (input, output) => {
      if (context === undefined) {
        const said = await answer({ hook_event_name: "SessionStart", session_id: input?.sessionID });
        context = typeof said.context === "string" ? said.context : "";
      }
      if (context) output.system.push(context);
    },

    event: async ({ event }) => {
      if (event.type !== "session.idle" || DRIVEN) return;
      const id = event.properties?.sessionID;
      if (!id) return;
      const said = await answer({
        hook_event_name: "Stop",
        session_id: id,
        stop_hook_active: refused.has(id),
      });
      if (said.failed) {
        const n = (failures.get(id) ?? 0) + 1;
        failures.set(id, n);
        if (n > MAX_FAILURES) {
          await client.app
            ?.log?.({ body: { service: "orcho", level: "error", message: `orcho did not answer ${MAX_FAILURES} stops in a row; the session stops unguarded: ${said.reason}` } })
            .catch(() => {});
          return;
        }
      } else {
        failures.delete(id);
      }
      if (said.decision === "block" || said.decision === "deny") {
        refused.add(id);
        await client.session.promptAsync({
          path: { id },
          body: { parts: [{ type: "text", text: said.reason }] },
        });
        return;
      }
      refused.delete(id);
      if (said.systemMessage) {
        await client.app
          ?.log?.({ body: { service: "orcho", level: "warn", message: said.systemMessage } })
          .catch(() => {});
      }
    },
  };
};
