"""The private store: git objects and the operation log (``store``), its lock (``lock``), pack
folder upkeep (``packs``) and how Takeback writes its own files (``atomic``). Imports ``errors``
only; knows nothing of turns or of the person's work tree.
"""
