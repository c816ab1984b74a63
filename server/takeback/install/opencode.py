"""OpenCode's plugin: OpenCode runs no command hooks, so Takeback installs a small JavaScript
plugin file that hands each event to ``takeback hook opencode EVENT`` as JSON on stdin
(``chat.message``, ``tool.execute.before``, ``tool.execute.after``, and the bus events
``session.created``, which records nothing but has the workspace made ready, and
``session.idle``), and lists it in ``opencode.json``'s ``"plugin"`` as a ``file://`` URL.

The JSON has the fields of the payloads captured in the live runs
(shared/notes/agent-payloads/opencode.json): ``hook_event_name``, ``cwd``, ``worktree``,
``session_id``, and per event ``message_id``/``prompt``, ``call_id``/``tool_name``/
``tool_input`` (and ``title``/``tool_output`` after), ``properties``. The plugin throws into
OpenCode only to carry out the guard's deny: ``tool.execute.before`` reads the command's stdout
(``hooks/answers.py``: ``{"action": "deny", "message": …}``) and throws an Error with the
message, which OpenCode gives the model as the tool's failure (OpenCode 1.18 has no way for a
plugin to ask: its ``permission.ask`` hook is never called). Otherwise it never throws, and it
waits for the command (at most ``LIMIT_SECONDS``), as the other agents wait for their hooks; it
hands events over one at a time, in the order OpenCode fired them (OpenCode runs the calls of
one response side by side), and its ``dispose`` waits for the last one
(``opencode run`` exits right after ``session.idle``, whose handler OpenCode does not wait for).
Also here: whether OpenCode's config folder has its plugin package, which OpenCode otherwise
fetches from npm at its next start (offline: about 70 s of retries at each start).
"""

from __future__ import annotations

import json
from pathlib import Path

LIMIT_SECONDS = 60
"""How long the plugin waits for one ``takeback hook`` before it ends it and lets OpenCode go on
(beyond the store lock's 30 s wait; Claude Code's default hook timeout)."""

MARK = "// Takeback's OpenCode plugin: written by 'takeback install opencode', removed by 'takeback uninstall opencode'."

_BODY = """
import { spawn } from "node:child_process";

const TAKEBACK = __ARGV__;
const LIMIT_MS = __LIMIT_MS__;
let queue = Promise.resolve();

// One 'takeback hook' process, the event as JSON on stdin; resolves with what it printed when
// it is done (or "" after LIMIT_MS, when it is ended), never rejects.
function run(event, payload) {
  return new Promise((resolve) => {
    try {
      const child = spawn(TAKEBACK[0], [...TAKEBACK.slice(1), "hook", "opencode", event], {
        stdio: ["pipe", "pipe", "ignore"],
      });
      const out = [];
      const timer = setTimeout(() => {
        try { child.kill(); } catch {}
        resolve("");
      }, LIMIT_MS);
      const finish = () => {
        clearTimeout(timer);
        resolve(Buffer.concat(out).toString("utf8"));
      };
      child.on("error", finish);
      child.on("close", finish);
      child.stdout.on("data", (chunk) => out.push(chunk));
      child.stdout.on("error", () => {});
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
    } catch {
      resolve("");
    }
  });
}

// OpenCode runs the tool calls of one response side by side; their events go to Takeback one
// at a time, in the order OpenCode fired them, as an agent's command hooks do.
function send(event, payload) {
  queue = queue.then(() => run(event, payload));
  return queue;
}

// The guard's answer to a tool call (hooks/answers.py): {"action": "deny", "message": …}, or
// nothing (allowed).
function verdict(text) {
  try {
    const answer = JSON.parse(text);
    return answer && typeof answer === "object" ? answer : {};
  } catch {
    return {};
  }
}

function guarded(hook) {
  return async (...args) => {
    try {
      await hook(...args);
    } catch {}
  };
}

export const Takeback = async ({ directory, worktree }) => {
  const where = { cwd: directory, worktree };
  const args = new Map();
  return {
    "chat.message": guarded(async (input, output) => {
      const parts = (output && output.parts) || [];
      const prompt = parts.filter((p) => p && p.type === "text" && !p.synthetic).map((p) => p.text).join("\\n");
      await send("chat.message", { ...where, session_id: input.sessionID, message_id: input.messageID || (output.message && output.message.id), prompt });
    }),
    "tool.execute.before": async (input, output) => {
      let answer = {};
      try {
        args.set(input.callID, output && output.args);
        answer = verdict(await send("tool.execute.before", { ...where, session_id: input.sessionID, call_id: input.callID, tool_name: input.tool, tool_input: output && output.args }));
      } catch {}
      // The one error the plugin throws: the guard denied this call, and OpenCode fails it with the message.
      if (answer.action === "deny") throw new Error(String(answer.message || "Takeback's guard denied this call"));
    },
    "tool.execute.after": guarded(async (input, output) => {
      const toolInput = input.args !== undefined ? input.args : args.get(input.callID);
      args.delete(input.callID);
      await send("tool.execute.after", { ...where, session_id: input.sessionID, call_id: input.callID, tool_name: input.tool, tool_input: toolInput, title: output && output.title, tool_output: output && output.output });
    }),
    event: guarded(async ({ event }) => {
      if (event && event.type === "session.created") {
        // Nothing is recorded: Takeback makes the workspace ready before the first prompt.
        const props = event.properties || {};
        await send("session.created", { ...where, session_id: props.sessionID || (props.info && props.info.id), properties: props });
      }
      if (event && event.type === "session.idle") {
        await send("session.idle", { ...where, session_id: event.properties && event.properties.sessionID, properties: event.properties });
      }
    }),
    // OpenCode does not wait for event handlers, and 'opencode run' exits right after
    // session.idle; it does wait for dispose, so the last calls finish before it exits.
    dispose: async () => {
      await queue;
    },
  };
};
"""  # noqa: E501 - the JavaScript is written as OpenCode reads it, line for line


def plugin_source(argv: list[str]) -> str:
    """The plugin file, running the Takeback that ``argv`` starts."""
    return MARK + "\n" + _BODY.replace("__ARGV__", json.dumps(argv)).replace("__LIMIT_MS__", str(LIMIT_SECONDS * 1000))


def is_ours(data: bytes | None) -> bool:
    return data is not None and data.startswith(MARK.encode())


PACKAGE = "@opencode-ai/plugin"


def has_package(folder: Path, lock: bytes | None) -> bool:
    """Whether OpenCode finds its plugin package installed in its config ``folder`` (whose
    ``package-lock.json`` holds ``lock``): OpenCode's own test, a ``node_modules/`` and a lock
    whose project lists the package. Without it OpenCode installs it from npm when it starts."""
    if not (folder / "node_modules").is_dir() or lock is None:
        return False
    try:
        project = json.loads(lock).get("packages", {}).get("", {})
    except (ValueError, AttributeError):
        return False
    kinds = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
    return isinstance(project, dict) and any(isinstance(project.get(k), dict) and PACKAGE in project[k] for k in kinds)


def package_note(folder: Path) -> str:
    """Said when ``folder`` does not have OpenCode's plugin package yet (checked live with
    OpenCode 1.18.33: with any plugin listed, every start waits for that install, and offline
    its retries take about 70 s, until one start had the registry)."""
    return (
        f"With a plugin, OpenCode installs {PACKAGE} into {folder} from npm when it starts (once): "
        "without access to the npm registry it waits about 70 s at each start until that has worked."
    )
