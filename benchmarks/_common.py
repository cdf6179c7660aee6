"""Shared by the benchmarks: the machine and versions line, peers' availability, timing."""

from __future__ import annotations

import importlib
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "chain"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def optional(name: str):
    """The module ``name`` or ``None`` (a peer that is not installed is skipped)."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def machine() -> str:
    """One line: CPU, cores, Python, NumPy/SciPy/SymEngine/compiler/peer versions."""
    import numpy
    import scipy
    import symengine

    from kidym.codegen.build import compiler_version

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    parts = [f"{cpu}, {os.cpu_count()} cores", f"python {platform.python_version()}",
             f"numpy {numpy.__version__}", f"scipy {scipy.__version__}",
             f"symengine {symengine.__version__}", compiler_version()]
    for mod, label in (("pydy", "pydy"), ("Cython", "cython"), ("pinocchio", "pinocchio")):
        m = optional(mod)
        parts.append(f"{label} {m.__version__}" if m else f"{label} not installed")
    parts.append(f"SUNDIALS {sundials_version()}")
    return "; ".join(parts)


def sundials_version() -> str:
    """The SUNDIALS version of the installed headers (``unknown`` without them)."""
    try:
        text = Path("/usr/include/sundials/sundials_config.h").read_text()
    except OSError:
        return "unknown"
    for line in text.splitlines():
        if line.startswith("#define SUNDIALS_VERSION "):
            return line.split()[-1].strip('"')
    return "unknown"


def best_time(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """Best of ``repeat`` timings of ``number`` calls, seconds per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best
