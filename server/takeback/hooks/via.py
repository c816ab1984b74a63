"""Whether a hook call came through the Claude Code plugin's launcher, and only then.

The launcher (``server/takeback/plugins/claude-code/takeback/bin/takeback``) sets ``TAKEBACK_VIA=claude-plugin:<its
pid>`` and then execs Takeback, so the pid is the hook process's own. A ``TAKEBACK_VIA`` that came
any other way is dropped: a repository's ``.claude/settings.json`` may set environment variables
for every hook, and the person's own settings hook, believing it came through the plugin, would
step aside for itself (``plugin.py``), recording nothing. Checked once, where the hook process
starts (``run.py``), before its environment is handed on; nothing imported (every hook's path).
"""

TYPE_CHECKING = False  # typing's own costs milliseconds on a hook's path
if TYPE_CHECKING:
    from collections.abc import Mapping

VIA = "TAKEBACK_VIA"
PLUGIN = "claude-plugin"


def via_plugin(env: "Mapping[str, str]") -> bool:
    """Whether a checked environment (``checked_environment``) says the plugin started the hook."""
    return env.get(VIA) == PLUGIN


def checked_environment(env: "Mapping[str, str]", pid: int) -> dict[str, str]:
    """The hook's environment, holding ``TAKEBACK_VIA=claude-plugin`` only when the plugin's
    launcher started process ``pid`` (this one)."""
    checked = {k: v for k, v in env.items() if k != VIA}
    if env.get(VIA) == f"{PLUGIN}:{pid}":
        checked[VIA] = PLUGIN
    return checked
