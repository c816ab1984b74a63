"""Agents' hooks → the engine: ``takeback hook AGENT [EVENT]``.

``agents`` reads each agent's payload into a normalized ``events.Event`` (prompt, a tool call's
start and end, stop, session end); ``where`` finds the workspace it belongs to; ``record``
turns events into engine calls (a prompt opens a turn with no bracket, each tool call is a step,
stop ends the turn); ``run`` is the command itself, which never fails the agent. The engine
knows nothing of hooks.
"""
