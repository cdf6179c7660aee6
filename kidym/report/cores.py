"""Whether a second process would have a core to itself (standard library only).

The plot worker (:mod:`kidym.report.plot_worker`) forks only then, and the plots
(:mod:`kidym.report.plots`) draw in two processes only then; both read it here.
"""

from __future__ import annotations

import os


def idle_core() -> bool:
    """Whether a second process would find a core of its own (two cores or more, the
    load average below cores − 1, and ``os.fork``)."""
    cores = os.cpu_count() or 1
    if cores < 2 or not hasattr(os, "fork"):
        return False
    try:
        return os.getloadavg()[0] < cores - 1
    except OSError:
        return False
