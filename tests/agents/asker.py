"""The person answering Claude Code's permission questions in a live test: runs ``claude -p`` with
its permission prompts routed to this process (``--permission-prompt-tool stdio``, the Agent
SDK's control protocol, the one IDE front ends use), records each question and answers it.

    python asker.py QUESTIONS.jsonl ANSWER PROMPT -- CLAUDE [ARGS...]

``CLAUDE ARGS`` is run with ``-p`` and streamed JSON in and out; PROMPT is sent as its one
user message. Every ``can_use_tool`` request Claude Code sends (``tool_name``,
``input``, ``decision_reason``: a hook's ``permissionDecisionReason``) is appended to
QUESTIONS.jsonl, one JSON line each, and answered ``ANSWER``: ``deny`` (the call does not run) or
``allow`` (this call runs, once). Claude Code's stdout is passed on; the exit status is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys


def main() -> int:
    questions, answer, prompt = sys.argv[1:4]
    argv = sys.argv[sys.argv.index("--") + 1:]
    proc = subprocess.Popen([*argv, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                             "--verbose", "--permission-prompt-tool", "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    send({"type": "user", "message": {"role": "user", "content": prompt}})
    for line in proc.stdout:
        sys.stdout.buffer.write(line)
        message = json.loads(line)
        if message.get("type") == "control_request" and message["request"].get("subtype") == "can_use_tool":
            request = message["request"]
            with open(questions, "a", encoding="utf-8") as log:
                log.write(json.dumps(request) + "\n")
            said = ({"behavior": "allow", "updatedInput": request["input"]} if answer == "allow"
                    else {"behavior": "deny", "message": "the person said no"})
            send({"type": "control_response", "response": {"subtype": "success", "request_id": message["request_id"],
                                                            "response": said}})
        elif message.get("type") == "result":
            proc.stdin.close()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
