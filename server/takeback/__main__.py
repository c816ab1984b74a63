"""``python -m takeback`` runs the CLI (``takeback hook`` on its short path, ``launch.py``).

The hook line ``takeback install`` writes runs this file as a program without the ``site``
machinery, ``PYTHON -S …/takeback/__main__.py hook AGENT``: the interpreter's own start is most
of a hook's cost, and ``site`` (the virtualenv's paths, every ``.pth`` file) is a third of it.
Run so (as a file: a folder would import ``runpy``), the package folder's parent is put first on
the module path (it is the Takeback that install wrote), and ``site`` is loaded only where more
than the standard library is needed: any command but a hook (here), a hook worked in-process
(``hooks/run.py``), or a coverage run (its ``.pth`` file starts the measurement).
"""

import sys

if not __package__:  # run as a file: ``python -S …/takeback/__main__.py`` (-P or not)
    import os

    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # the package's own folder: its modules are not top-level ones
    sys.path.insert(0, home)
    if sys.flags.no_site and (
        sys.argv[1:2] != ["hook"] or "-h" in sys.argv or "--help" in sys.argv
        or "COVERAGE_PROCESS_START" in os.environ or "COVERAGE_PROCESS_CONFIG" in os.environ
    ):
        import site

        site.main()

from takeback.launch import main

sys.exit(main())
