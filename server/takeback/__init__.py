"""Takeback: exact undo for coding-agent turns (engine, CLI and language server)."""

__version__ = "0.1.0"
