"""Runs one agent command offline: inside a fresh network namespace whose only interface is
loopback (``unshare -n``, as root), beside the scripted model server (``model_server.py``).

    unshare -n python offline.py SCRIPT.json TIMEOUT -- COMMAND...

It brings ``lo`` up, starts the model server on 127.0.0.1, replaces ``{PORT}`` in the command
and in every ``TB_AGENT_*`` environment value (passed on without the prefix, e.g.
``TB_AGENT_ANTHROPIC_BASE_URL=http://127.0.0.1:{PORT}``), runs the command with stdin closed and ``PWD`` set to its folder,
and exits with its status (124 when it ran out of time). With ``TB_OFFLINE_STDIN=FILE`` (JSON
lines: an agent's streamed input, several prompts in one process, as Claude Code's
``--input-format stream-json`` reads them) the lines are written to the command's stdin one at a
time, each after the agent answered the one before (a ``{"type": "result"}`` line on its stdout),
the way a person types the next prompt; stdin closes after the last answer.
Nothing can leave the machine: the namespace has no other interface.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_server


def main() -> int:
    script, timeout = sys.argv[1], float(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with tempfile.TemporaryDirectory() as scratch:
        server = model_server.serve(script, os.path.join(scratch, "port"))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = str(server.server_address[1])
        env = {k: v for k, v in os.environ.items() if not k.startswith("TB_AGENT_")}
        env.update({k[len("TB_AGENT_"):]: v.replace("{PORT}", port) for k, v in os.environ.items() if k.startswith("TB_AGENT_")})
        env["PWD"] = os.getcwd()  # as a shell sets it: OpenCode works in $PWD, not in its current folder
        stdin_file = env.pop("TB_OFFLINE_STDIN", None)
        argv = [c.replace("{PORT}", port) for c in command]
        try:
            if stdin_file:
                return _converse(argv, env, Path(stdin_file).read_text().splitlines(), timeout)
            return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return 124
        finally:
            server.shutdown()


def _converse(argv: list[str], env: dict[str, str], prompts: list[str], timeout: float) -> int:
    """Run ``argv`` with ``prompts`` written to its stdin one by one, each once the previous one
    was answered; its stdout is passed on. 124 when it runs out of time."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        pending = list(prompts)
        proc.stdin.write((pending.pop(0) + "\n").encode())
        proc.stdin.flush()
        for line in proc.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
            if line.startswith(b'{"type":"result"'):
                if pending:
                    proc.stdin.write((pending.pop(0) + "\n").encode())
                    proc.stdin.flush()
                elif not proc.stdin.closed:
                    proc.stdin.close()
        code = proc.wait()
        return 124 if not timer.is_alive() else code
    finally:
        timer.cancel()


if __name__ == "__main__":
    sys.exit(main())
