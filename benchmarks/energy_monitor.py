"""The energy monitor's margin, measured: every example and the tests' models, both
engines, the default tolerances and rtol 1e-6 … 1e-10.

For every run that the monitor checks (:mod:`kidym.simulation.energy_monitor`: a
model whose work is zero by its structure) it prints ``|E − E(0)| / δE`` at its worst
— the balance against the energy change one step's allowed error can make, before the
margin — and at the end the largest over all runs, beside the margin the monitor uses
(``MARGIN``): a run fails where this ratio passes it. Runs the monitor does not check
are counted, with their reasons. The monitor is switched off for the runs measured
here (``monitor_energy=False`` does not skip the measurement: the check is evaluated
the same way on the finished result), so a run over the margin is printed, not cut.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 python benchmarks/energy_monitor.py [--engines numpy,compiled]
        [--models NAME …] [--reference]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

import _common  # noqa: F401  (the paths: the repository, examples/chain)
import numpy as np
import symengine as se

import kidym
from kidym.simulation.energy_monitor import MARGIN, check_energy
from kidym.simulation.numpy_system import NumpySystem
from tests import fixtures
from tests.simulation.test_energy_balance import DRIVEN, OSCILLATOR

#: (rtol, atol) of the runs: the defaults first.
TOLERANCES = ((1e-9, 1e-12), (1e-6, 1e-12), (1e-7, 1e-12), (1e-8, 1e-12), (1e-10, 1e-12))


def models():
    """``(name, model, options)``: the examples' dynamics files over their own span,
    then the tests' models (``tests/fixtures.py``, ``tests/simulation/
    test_energy_balance.py``)."""
    for path in sorted(fixtures.EXAMPLES.rglob("*.kdm")):
        model = kidym.load(path)
        if model.calculation not in (None, "DYNAMICS"):
            continue
        options: dict = {}
        if model.virtual_constraints:   # as tests/simulation/test_energy_balance.py
            values = {se.Symbol(k): v for k, v in model.parameter_values.items()}
            alpha = max(float(v.alpha.xreplace(values)) for v in model.virtual_constraints)
            options["max_step"] = 0.05 / np.sqrt(alpha)
        if model.inputs:
            options["inputs"] = {u: (lambda t, s: np.sin(3 * t)) for u in model.inputs}
        yield path.stem, model, options
    for name in ("DOUBLE_PENDULUM", "ROD_WITH_MOMENT", "MOMENTS_ON_BODY_AXES",
                 "FOUR_BAR_SPRING", "IFTOMM_A02_N1", "SLIDER_CRANK_DEAD_CENTRE"):
        options = {"t_end": 5.0} if name in ("DOUBLE_PENDULUM", "ROD_WITH_MOMENT") else {}
        if name == "DOUBLE_PENDULUM":
            options["initial"] = {"phi1": 0.7}
        yield name, kidym.parse(getattr(fixtures, name)), options
    yield "chain_text(4)", kidym.parse(fixtures.chain_text(4)), {"t_end": 5.0}
    yield "OSCILLATOR", kidym.parse(OSCILLATOR), {"t_end": 5.0}
    yield "DRIVEN", kidym.parse(DRIVEN), {"t_end": 5.0}


def reference_errors(eq, engine: str, rtol: float, atol: float, options: dict) -> str:
    """How far the run at ``rtol`` and the one at ``10 rtol`` are from a compiled run at
    rtol 1e-12: the largest difference of a coordinate over the output times."""
    ref = kidym.simulate(eq, engine="compiled", rtol=1e-12, atol=1e-14,
                         monitor_energy=False, **options)
    names = [str(q) for q in eq.coordinates]
    errors = []
    for tol in (rtol, 10 * rtol):
        r = kidym.simulate(eq, engine=engine, rtol=tol, atol=atol, monitor_energy=False,
                           raise_on_failure=False, **options)
        n = min(r.t.size, ref.t.size)
        errors.append(max(float(np.max(np.abs(r[q][:n] - ref[q][:n]))) for q in names))
    return (f"    its coordinates are {errors[0]:.2g} off a compiled run at rtol 1e-12; "
            f"at rtol {10 * rtol:.0e}, {errors[1]:.2g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="numpy,compiled")
    parser.add_argument("--models", nargs="*", default=None,
                        help="only these (the names printed: example stems, fixtures)")
    parser.add_argument("--reference", action="store_true",
                        help="for a run over the margin, the error of its coordinates "
                             "against a compiled run at rtol 1e-12, beside the same "
                             "run's at ten times the tolerance")
    args = parser.parse_args()
    worst = (0.0, "")
    skipped: collections.Counter = collections.Counter()
    failed = []
    for name, model, options in models():
        if args.models and name not in args.models:
            continue
        eq = kidym.derive(model)
        system = NumpySystem.build(eq)
        for engine in args.engines.split(","):
            for rtol, atol in TOLERANCES:
                started = time.perf_counter()
                r = kidym.simulate(eq, engine=engine, rtol=rtol, atol=atol,
                                   raise_on_failure=False, monitor_energy=False, **options)
                p = system.parameter_vector(r.parameters)
                check = check_energy(r, eq, system, p, rtol=rtol, atol=atol)
                label = f"{name:28s} {engine:8s} rtol {rtol:.0e} atol {atol:.0e}"
                if not r.success:
                    failed.append(f"{label}: {r.message[:100]}")
                if check.reason:
                    skipped[check.reason.split(":")[0].split(" (")[0]] += 1
                    continue
                ratio = check.ratio * MARGIN
                worst = max(worst, (ratio, label))
                print(f"{label}  |B|/dE = {ratio:9.3g}   "
                      f"({time.perf_counter() - started:.1f} s)", flush=True)
                if args.reference and ratio > MARGIN:
                    print(reference_errors(eq, engine, rtol, atol, options), flush=True)
    print()
    for reason, n in sorted(skipped.items()):
        print(f"not monitored ({n} runs): {reason}")
    for line in failed:
        print(f"run failed (not counted against the margin): {line}")
    print(f"largest |E - E(0)| / dE over the monitored runs: {worst[0]:.3g} ({worst[1]})")
    print(f"the monitor's margin: {MARGIN:g} (headroom {MARGIN / worst[0]:.3g}x)")


if __name__ == "__main__":
    sys.exit(main())
