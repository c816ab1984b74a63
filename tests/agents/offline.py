"""Runs one agent command offline: inside a fresh network namespace whose only interface is
loopback (``unshare -n``, as root), beside the scripted model server (``model_server.py``).

    unshare -n python offline.py SCRIPT.json TIMEOUT -- COMMAND...

It brings ``lo`` up, starts the model server on 127.0.0.1, replaces ``{PORT}`` in the command
and in every ``TB_AGENT_*`` environment value (passed on without the prefix, e.g.
``TB_AGENT_ANTHROPIC_BASE_URL=http://127.0.0.1:{PORT}``), runs the command with stdin closed and ``PWD`` set to its folder,
and exits with its status (124 when it ran out of time). Nothing can leave the machine: the
namespace has no other interface.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_server  # noqa: E402


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
        try:
            return subprocess.run([c.replace("{PORT}", port) for c in command], env=env, stdin=subprocess.DEVNULL,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return 124
        finally:
            server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
