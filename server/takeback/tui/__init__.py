"""``takeback ui``: a full-screen timeline in the terminal, for people who run their agent in a
terminal and never open an editor. Sessions, turns, steps and files on the left, the diff of
the selected one on the right (below it in a narrow terminal); keys undo, redo, revert and
restore, each showing the engine's plan first and its verdict after.

Built on Textual: the established, well-kept Python library for full-screen terminal programs
(layout, focus, key bindings, modal screens, colour down-sampling to 256 or 16 colours, and a
headless driver, ``App.run_test``, that the tests drive as a person would). A thin adapter like
the CLI: every answer and every write is the engine's (``plans.py`` calls ``Operations``, the
same calls as the CLI's ``--dry-run`` and its confirmation); nothing here writes a file.

``outline`` builds the tree's content from entries, ``panes`` the text shown beside it and in
the plan's window, ``plans`` asks the engine for a plan and carries it out, ``screens`` holds
the plan's window, ``app`` puts them together and refreshes as hooks record.
"""
