"""``engine="auto"`` (the default): whether compiling pays off for a run.

The rule (``docs/compiled.md``, "Engine choice"), in order:

1. the compiled library is in the cache: compiled (loading it costs milliseconds);
2. no C compiler (``$CC`` or ``cc`` not found): NumPy, with a one-line hint;
3. a method only the NumPy engine has (``Radau``, ``LSODA``, ``RK23``), or
   ``quaternion_stabilization``: NumPy;
4. otherwise a **probe**: the run itself in NumPy over a short first slice of its span,
   the slice growing fourfold (from ``4⁻⁶`` of the span) until one takes at least
   :data:`PROBE_S` seconds of CPU time or the slice is the whole span. A probe that reaches the end
   is the run (NumPy was cheaper than any compile; its result is kept). Otherwise the
   NumPy run's time is extrapolated from the last slice (the rate of its part beyond
   the slice before, over the rest of the span: the real step count of the real run
   at the requested tolerances, not a guessed number of evaluations per unit of
   time) and compared with the time to generate and
   compile the C (:func:`kidym.simulation.compiled.compile_estimate`; a NumPy run
   below that time's floor, :func:`~kidym.simulation.compiled.compile_floor` from the
   size of the generated Python, stays in NumPy without generating any C). The C
   generated for the estimate is the C the build compiles (``Choice.code``).

The probe measures the run, not what ran before: nothing it uses is cached between
runs except the generated Python, which is built before it is timed.
"""

from __future__ import annotations

import dataclasses
import shutil
import time as _time
from collections.abc import Callable

import numpy as np

from kidym.codegen import index
from kidym.codegen.build import BASE_FLAGS, build_flags, compiler, library_path
from kidym.codegen.emit import CCode, generate_c
from kidym.eom.equations import Equations
from kidym.errors import SimulationError
from kidym.simulation.compiled import compile_estimate, compile_floor
from kidym.simulation.compiled_methods import COMPILED_METHODS, METHOD_ALIASES, wants_jacobian
from kidym.simulation.result import Result
from kidym.simulation.spec import RunOptions, RunSpec

#: Seconds of CPU time a probe slice must take before its time is extrapolated.
PROBE_S = 0.05
#: The least part of :data:`PROBE_S` that a slice must take for its extrapolation to
#: send the probe to the whole run (below it the solver's set-up is most of it).
PROBE_TRUST = 0.125
#: The first probe slice as a fraction of the span; each next one is 4 times longer.
PROBE_FIRST = 4.0 ** -6
#: What a run without a C compiler prints (once) about it.
NO_COMPILER_HINT = ("no C compiler found ($CC or cc): NumPy; install one (and SUNDIALS: "
                    "bash .ci/system-deps) for the compiled engine, often 40-130x faster")

#: ``(spec) -> (result, error)``: the NumPy engine's run of a prepared run.
Runner = Callable[[RunSpec], tuple[Result, "SimulationError | None"]]


@dataclasses.dataclass
class Choice:
    """What ``auto`` chose: ``engine`` (``"numpy"`` or ``"compiled"``) and ``why``; where
    the probe ran the whole span, its ``result`` and ``error`` are the run's."""

    engine: str
    why: str
    result: Result | None = None
    error: SimulationError | None = None
    #: the C generated for the estimate, which the build compiles (generated once)
    code: CCode | None = None


def forced(eq: Equations, options: RunOptions, *,
           flags: tuple[str, ...] = BASE_FLAGS) -> Choice | None:
    """The choice where no probe is needed (rules 1-3 of the module), or ``None``."""
    method = METHOD_ALIASES.get(options.method, options.method)
    if method not in COMPILED_METHODS:
        return Choice("numpy", f"method {options.method} runs in the NumPy engine only")
    if options.quaternion_stabilization:
        return Choice("numpy", "quaternion_stabilization is applied by the NumPy engine only")
    if index.lookup(index.equations_key(eq, events=options.events, flags=build_flags(flags),
                                        jacobian=wants_jacobian(eq, options))):
        return Choice("compiled", "the compiled library is in the cache")
    if shutil.which(compiler()[0]) is None:
        return Choice("numpy", NO_COMPILER_HINT)
    return None


def probe(run: Runner, spec: RunSpec, floor: float = 0.0
          ) -> tuple[float, float, Choice | None]:
    """``(seconds, fraction, done)``: the NumPy run's time extrapolated from the last
    probe slice (``fraction`` of the span), or ``done`` — the whole run, where a slice
    reached the end or stopped it (a failure or a terminal event). The extrapolation
    takes the rate of the last slice's part beyond the slice before (both start at
    ``t0``), so that the start's small steps are not taken for the whole run.

    The times are the process's CPU time, not wall time: on a loaded machine a slice
    of a millisecond that waited 50 ms for a core would otherwise be extrapolated to
    minutes (a 60th of a second's wait in the first slice, 4⁻⁶ of the span, counted
    4 096 times).

    A slice of at least :data:`PROBE_TRUST` of :data:`PROBE_S` whose extrapolation is
    at most ``floor`` (the least build, :func:`choose_engine`) is followed by the whole
    run at once: NumPy is chosen whatever the next slices would say, and the slices
    between would be run for nothing."""
    import scipy.integrate  # noqa: F401  (imported before anything is timed)

    t0, t1 = spec.t0, spec.t1
    fraction = PROBE_FIRST
    warm = True   # the first slice once untimed: a process's first run loads modules
    before = 0.0  # the CPU time of the slice before
    while True:
        if fraction >= 1.0:
            start = _time.process_time()
            result, error = run(spec)
            cpu = _time.process_time() - start
            return cpu, 1.0, Choice("numpy", f"the whole NumPy run took {cpu:.2g} s of CPU, "
                                     "less than compiling", result, error)
        tp = t0 + (t1 - t0) * fraction
        times = spec.times[spec.times < tp]
        part = dataclasses.replace(spec, t1=tp, times=np.append(times, tp))
        if warm:
            run(part)
            warm = False
        start = _time.process_time()
        result, error = run(part)
        cpu = _time.process_time() - start
        if error is not None:
            return cpu, fraction, Choice(
                "numpy", f"the NumPy probe stopped at t = {error.time:g}")
        if result.t.size and result.t[-1] < tp - 1e-12 * max(1.0, abs(tp)):
            return cpu, fraction, Choice(
                "numpy", f"the run ends at t = {result.t[-1]:g} (an event), within the "
                         "NumPy probe")
        # the rate of the last three quarters of the slice: the start (the first
        # steps, small while the step size is found) is not the rest of the run
        rate = max(cpu - before, 0.25 * cpu) / (0.75 * fraction)
        estimate = cpu + rate * (1.0 - fraction)
        if cpu >= PROBE_S:
            return estimate, fraction, None
        before = cpu
        fraction = 1.0 if cpu >= PROBE_TRUST * PROBE_S and estimate <= floor else 4 * fraction


def choose_engine(eq: Equations, options: RunOptions, run: Runner, spec: RunSpec, *,
                  flags: tuple[str, ...] = BASE_FLAGS, python_bytes: int = 0) -> Choice:
    """Whether compiling pays off for this run: rule 4 of the module docstring (the
    caller has found that :func:`forced` does not decide).

    ``run`` is the NumPy engine's run of a prepared run (the probe's), ``spec`` the run
    prepared, ``python_bytes`` the size of the NumPy engine's generated Python of
    ``eq`` (a floor of the build's time before any C is generated:
    :func:`~kidym.simulation.compiled.compile_floor`). The reason is one line, for
    ``result.stats["engine_choice"]``.
    """
    floor = compile_floor(python_bytes)
    numpy_s, fraction, done = probe(run, spec, floor)
    if done is not None:
        return done
    if numpy_s <= floor:   # below the least build of this size: no C generated
        return Choice("numpy", f"NumPy run about {numpy_s:.2g} s <= the least build of "
                               f"this model, about {floor:.2g} s")
    start = _time.process_time()
    code = generate_c(eq, events=options.events, jacobian=wants_jacobian(eq, options))
    if library_path(code, build_flags(flags)).exists():
        return Choice("compiled", "the compiled library is in the cache", code=code)
    generate_s = _time.process_time() - start
    compile_s = compile_estimate(code) + generate_s
    size = sum(len(x.encode("utf-8")) for x in code.sources)
    probed = (spec.t1 - spec.t0) * fraction
    what = (f"NumPy run about {numpy_s:.2g} s (probed over its first {probed:.2g} s) "
            f"{{}} generating and compiling about {compile_s:.2g} s ({size // 1024} kB of C)")
    if numpy_s > compile_s:
        return Choice("compiled", what.format(">"), code=code)
    return Choice("numpy", what.format("<="))

