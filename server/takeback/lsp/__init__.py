"""Takeback's language server: the engine's operations over LSP (``takeback serve``).

``server`` holds the ``LanguageServer`` subclass, the factory and ``run``; ``protocol`` names
every custom method with its typed params and results; each other module is one feature group
with a ``setup(server)`` that registers its handlers. docs/protocol.md is the reference.
"""
