"""`takeback install` / `takeback uninstall`: wiring agents' hooks (and the MCP server) into
their own config files.

``agents`` is the table of agents and where each keeps its config; ``command`` builds the command
line the hooks run; ``jsonconfig`` and ``tomlblock`` edit config files in place; ``hookentries``
and ``mcpentries`` know the shapes of the entries written; ``opencode`` writes OpenCode's plugin;
``ledger`` remembers each file's bytes before install so uninstall can put them back exactly;
``links`` writes through a config path that is a symbolic link; ``tracked`` says which project
files git tracks (changed only with ``--force``); ``bundled`` finds the files shipped beside the
code (the Claude Code plugin); ``plan`` puts it together: every file is read and checked before any is written.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .plan import Change, Report, install, uninstall

__all__ = ["Change", "Report", "install", "uninstall"]


def __getattr__(name: str) -> Any:
    """``plan`` (and with it the config, pydantic) loads on first use: ``takeback hook`` reads
    ``command`` alone to recognise a Takeback hook line, and stays light."""
    if name in __all__:
        from . import plan

        return getattr(plan, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
