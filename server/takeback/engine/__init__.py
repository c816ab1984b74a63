"""The engine: one workspace's timeline and every operation on it (``engine.Engine``, with
``operations`` and ``steps``), the open turns' files (``brackets``), asking an editor without
holding the lock (``handoff``), retention and the hook failure log. The only layer that knows
all the others. The adapters (``cli``, ``lsp``, ``hooks``, ``mcp``, ``resident``, ``install``)
call it, and below it use only the core's records and the errors (``install`` writes its own
files with ``storage.atomic``; the resident process takes its start-up lock with
``storage.lock``).
"""
