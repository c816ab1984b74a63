"""The resident process: a per-user process that keeps the engine loaded for agents' hooks.

Importing the engine takes about 270 ms, and an agent runs a hook on every prompt and tool call;
so ``takeback hook`` is a small client (``client.py``, standard library only) that hands the
event to a process started on demand by the first hook and exiting when idle (``server.py``),
over a socket in a folder only the user can enter (``address.py``). When that process is absent,
refuses or crashes, the hook records the event itself: a step is never lost.
``takeback resident`` (``command.py``) shows or stops it.
"""
