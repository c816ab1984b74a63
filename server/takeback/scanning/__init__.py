"""What changed on disk during a bracket: snapshots and their comparison (``scan``), asking git
or libgit2 which files are dirty (``listing``), the user's index copied at begin
(``indexcopy``), nested repositories (``nested``), clean files' checkout bytes (``checkout``) and
the work tree's watch (``watch``). Imports the core, the store and the workspace.
"""
