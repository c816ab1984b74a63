"""The guard: before an agent's tool call runs, say whether Takeback could take back what it does.

``shell.py`` reads a shell command line into the simple commands it runs (a real shell parser);
``rules.py`` holds, as data, which commands, subcommands, flags and paths mean which effect;
``classify.py`` turns a tool call into a verdict (undoable or not, the effect class, the paths at
risk); ``line.py`` writes its one line; ``walk.py`` holds the few bounded looks at the disk the
classifier may make. No subprocess, and no tree scan beyond those bounded walks. The engine knows nothing of the guard, and the
guard knows nothing of LSP, the CLI, the hooks' wiring or MCP (docs/guard.md).
"""
