"""The guard: before an agent's tool call runs, say whether Takeback could take back what it does.

``shell.py`` reads a shell command line into the simple commands it runs (a real shell parser);
``rules.py`` holds, as data, which commands, subcommands, flags and paths mean which effect;
``classify.py`` turns a tool call into a verdict (undoable or not, the effect class, one line of
reason). Pure code: no subprocess, no tree scan. The engine knows nothing of the guard, and the
guard knows nothing of LSP, the CLI, the hooks' wiring or MCP (docs/guard.md).
"""
