"""``takeback mcp``: the Model Context Protocol server, a thin adapter over ``Engine``.

``server.py`` builds the server and runs it on stdio; ``tools.py`` holds the tools (what an
agent may call, and what each answers); ``confirm.py`` the confirmation tokens that stand
between a destructive tool's plan and its execution; ``text.py`` the short human text each
answer carries beside its structured content. The engine knows nothing of MCP.
"""
