"""``engine="auto"``: whether compiling pays off for a run (seed 003's criterion)."""

from __future__ import annotations

import time as _time
from collections.abc import Sequence

import numpy as np

from kidym.codegen import index
from kidym.codegen.build import BASE_FLAGS, build_flags, library_path
from kidym.codegen.emit import CCode, generate_c
from kidym.eom.equations import Equations
from kidym.errors import SimulationError
from kidym.simulate.compiled import compile_estimate
from kidym.simulate.events import Event
from kidym.simulate.simulate import NumpySystem

#: Assumed right-hand-side evaluations per unit of model time when ``auto`` estimates
#: the length of a NumPy run (a DOP853 run at rtol 1e-9 of the example models takes
#: 300-3000 per second of model time).
EVALS_PER_TIME_UNIT = 1000.0


def choose_engine(eq: Equations, code: CCode | None, *, duration: float,
                  flags: tuple[str, ...] = BASE_FLAGS,
                  events: Sequence[Event] = ()) -> tuple[str, str]:
    """``("compiled" | "numpy", reason)``: whether compiling pays off for this run.

    The analogue of seed 003's criterion (speed-up grows with the size of the
    generated code): compile when the library is cached, or when the estimated
    compile time is below the estimated NumPy run time (one measured NumPy
    evaluation times :data:`EVALS_PER_TIME_UNIT` per unit of model time). ``code``
    (the generated C) is generated here when not given and the library is not in
    the cache.
    """
    if index.lookup(index.equations_key(eq, events=events, flags=build_flags(flags))):
        return "compiled", "the compiled library is in the cache"
    if code is None:
        code = generate_c(eq, events=events)
    if library_path(code, build_flags(flags)).exists():
        return "compiled", "the compiled library is in the cache"
    size = sum(len(x.encode("utf-8")) for x in code.sources)
    compile_s = compile_estimate(code)
    ns = NumpySystem.build(eq)
    p = ns.parameter_vector()
    y = np.full(len(ns.state_names), 0.1)
    start = _time.perf_counter()
    for _ in range(20):
        try:
            ns.rhs(0.0, y, p)
        except SimulationError:
            break
    per_eval = (_time.perf_counter() - start) / 20
    numpy_s = per_eval * EVALS_PER_TIME_UNIT * max(duration, 0.0)
    if numpy_s > compile_s:
        return "compiled", (f"estimated NumPy run {numpy_s:.2g} s > compile {compile_s:.2g} s "
                            f"({size // 1024} kB of C)")
    return "numpy", (f"estimated NumPy run {numpy_s:.2g} s <= compile {compile_s:.2g} s "
                     f"({size // 1024} kB of C)")
