"""``python -m takeback`` runs the CLI (``takeback hook`` on its short path, ``launch.py``)."""

import sys

from .launch import main

sys.exit(main())
