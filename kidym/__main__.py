"""``python -m kidym`` runs the command line."""

import sys

from kidym.cli import main

sys.exit(main())
