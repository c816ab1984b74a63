"""``python -m turnback`` runs the CLI."""

import sys

from .cli import main

sys.exit(main())
