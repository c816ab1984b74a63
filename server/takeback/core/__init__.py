"""The pure core: records and views (``models``), the timeline fold (``timeline``), planning
a revert (``planning``), the three-way merge (``merge``), text diffs (``textdiff``), ids and
time (``clock``) and the words people read (``wording``: an operation's answer; ``render``: the
CLI's text). Nothing here touches a disk, a
store or a process; it imports nothing of Takeback but ``errors``.
"""
