"""OpenCode's plugin: OpenCode runs no command hooks, so Takeback installs a small JavaScript
plugin file that hands each event to ``takeback hook opencode EVENT`` as JSON on stdin
(``chat.message``, ``tool.execute.before``, ``tool.execute.after``, and the bus event
``session.idle``), and lists it in ``opencode.json``'s ``"plugin"`` as a ``file://`` URL.

The JSON has the fields of the payloads captured in the live runs
(shared/notes/agent-payloads/opencode.json): ``hook_event_name``, ``cwd``, ``worktree``,
``session_id``, and per event ``message_id``/``prompt``, ``call_id``/``tool_name``/
``tool_input`` (and ``title``/``tool_output`` after), ``properties``. The plugin never throws
into OpenCode and waits for the command, as the other agents wait for their hooks.
"""

from __future__ import annotations

import json

MARK = "// Takeback's OpenCode plugin: written by 'takeback install opencode', removed by 'takeback uninstall opencode'."

_BODY = """
import { spawn } from "node:child_process";

const TAKEBACK = __ARGV__;

function send(event, payload) {
  return new Promise((resolve) => {
    try {
      const child = spawn(TAKEBACK[0], [...TAKEBACK.slice(1), "hook", "opencode", event], {
        stdio: ["pipe", "ignore", "ignore"],
      });
      child.on("error", () => resolve());
      child.on("close", () => resolve());
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
    } catch {
      resolve();
    }
  });
}

export const Takeback = async ({ directory, worktree }) => {
  const where = { cwd: directory, worktree };
  const args = new Map();
  return {
    "chat.message": async (input, output) => {
      const parts = (output && output.parts) || [];
      const prompt = parts.filter((p) => p && p.type === "text" && !p.synthetic).map((p) => p.text).join("\\n");
      await send("chat.message", { ...where, session_id: input.sessionID, message_id: input.messageID || (output.message && output.message.id), prompt });
    },
    "tool.execute.before": async (input, output) => {
      args.set(input.callID, output && output.args);
      await send("tool.execute.before", { ...where, session_id: input.sessionID, call_id: input.callID, tool_name: input.tool, tool_input: output && output.args });
    },
    "tool.execute.after": async (input, output) => {
      const toolInput = input.args !== undefined ? input.args : args.get(input.callID);
      args.delete(input.callID);
      await send("tool.execute.after", { ...where, session_id: input.sessionID, call_id: input.callID, tool_name: input.tool, tool_input: toolInput, title: output && output.title, tool_output: output && output.output });
    },
    event: async ({ event }) => {
      if (event && event.type === "session.idle") {
        await send("session.idle", { ...where, session_id: event.properties && event.properties.sessionID, properties: event.properties });
      }
    },
  };
};
"""


def plugin_source(argv: list[str]) -> str:
    """The plugin file, running the Takeback that ``argv`` starts."""
    return MARK + "\n" + _BODY.replace("__ARGV__", json.dumps(argv))


def is_ours(data: bytes | None) -> bool:
    return data is not None and data.startswith(MARK.encode())
