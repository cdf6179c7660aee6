"""Argument types of the command line shared by ``kidym`` and its subcommands
(standard library only: ``kidym --help`` imports it)."""

from __future__ import annotations

import argparse

#: Most output times of one run: each holds every state and quantity (a 10-state run at
#: this many points is 800 MB); a larger ``--points`` is refused before anything is
#: allocated (300 000 000 ended in a MemoryError traceback).
MAX_POINTS = 10_000_000


def output_points(text: str) -> int:
    """``--points``: a whole number from 1 to :data:`MAX_POINTS` (an argparse type)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got `{text}`") from None
    if not 1 <= n <= MAX_POINTS:
        raise argparse.ArgumentTypeError(f"the number of output times must be from 1 to "
                                         f"{MAX_POINTS}, got {n}")
    return n
