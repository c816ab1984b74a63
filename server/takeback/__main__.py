"""``python -m takeback`` runs the CLI (``takeback hook`` on its short path, ``launch.py``).

The hook line ``takeback install`` writes runs this file as a program without the ``site``
machinery, ``PYTHON -S …/takeback/__main__.py hook AGENT``: the interpreter's own start is most
of a hook's cost, and ``site`` (the virtualenv's paths, every ``.pth`` file) is a third of it.
Run so (as a file: a folder would import ``runpy``), the package folder's parent is put first on
the module path (it is the Takeback that install wrote), and ``site`` is loaded only where more
than the standard library is needed: any command but a hook (here), a hook worked in-process
(``hooks/run.py``), or a coverage run (its ``.pth`` file starts the measurement).
"""

import posix
import sys

if not __package__:  # run as a file: ``python -S …/takeback/__main__.py`` (-P or not)
    here = __file__  # absolute: Python makes a script's so, but not normal
    if {"", ".", ".."} & set(here.split("/")[1:]):  # (``os`` costs a hook a millisecond: ``oslite.py``)
        import os

        here = os.path.abspath(here)
    if not sys.flags.safe_path:
        del sys.path[0]  # the package's own folder, which Python put first: its modules are not top-level ones
    sys.path.insert(0, here.rpartition("/")[0].rpartition("/")[0] or "/")
    if sys.flags.no_site and (
        sys.argv[1:2] != ["hook"] or "-h" in sys.argv or "--help" in sys.argv
        or b"COVERAGE_PROCESS_START" in posix.environ or b"COVERAGE_PROCESS_CONFIG" in posix.environ
    ):
        import site

        site.main()

from takeback.launch import main

sys.exit(main())
