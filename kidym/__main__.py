"""``python -m kidym`` runs the command line."""

from kidym.cli import entry

entry()
