"""Stiff models: the compiled BDF with the analytic Jacobian vs difference quotients vs SciPy.

Three models, each over its own span with 101 outputs:

* Andrews' squeezing mechanism (``examples/andrews_squeezer``: 7 coordinates, 6
  constraints held by projection at the output times, 0.03 s): Hairer and Wanner's
  stiff test, though in kidym's form (the augmented system solved for ``ẇ``, index 1)
  hardly stiff — its README finds the explicit methods the cheapest;
* a chain of 10 masses joined by stiff, strongly damped springs (``k = 10⁴``,
  ``d = 10³``, ``m = 1``, generated below; 20 states, 10 s): eigenvalues from about
  −4 000 1/s (the overdamped fast modes) to a slow oscillation of about 10 rad/s,
  a stiffness ratio of some 10⁴ — the explicit methods' steps are held down by
  stability (kidym flags them, ``result.stats["stiffness"]``);
* the spatial 10-link chain of ``examples/chain`` (``make_chain.py``) with a stiff
  damped spring in every joint (``100 N m/rad``, ``100 N m s/rad``; 20 states, 5 s):
  a costly right-hand side (its ``M`` is full), spectral radius about 4 000 1/s.

Solvers:

* ``BDF an``: kidym's compiled loop, CVODE's BDF with the analytic Jacobian in C
  (``kidym_jac``, ``jacobian="analytic"``);
* ``BDF fd``: the same library and method with CVODE's difference-quotient Jacobian
  (``jacobian="fd"``, one evaluation of ``f`` per state and Jacobian);
* ``Radau`` and ``BDF`` of SciPy ``solve_ivp`` on kidym's NumPy right-hand side with
  its analytic Jacobian (:mod:`kidym.simulation.jacobian`; the NumPy engine,
  ``engine="numpy"``).

Equal accuracy: each SciPy method runs at ``rtol`` (``atol = rtol·1e-3``); the
compiled runs go down a ladder of rtol = (1e-6 … 30) × ``rtol`` (four per decade;
``atol = rtol·1e-3`` along: BDF is of order 5 at most and restarts at order 1 after
every projection, so it needs a far tighter rtol than Radau for the same error), and
each compiled column is the fastest of its runs whose error is at most that SciPy
method's: ``x Radau`` and ``x BDF`` are the SciPy method's time over the compiled
``BDF an`` at the error of that method, ``fd/an`` the time (and ``nfev``) of
``BDF fd`` over ``BDF an`` at the error of SciPy's Radau. Error:
the largest over all outputs and states of ``|y − y_ref| / (1 + |y_ref|)`` against a
compiled ``Fehlberg78`` run at rtol 1e-13 (steps ending on the outputs). Wall times:
best of five (compiled) and one run (SciPy, seconds each).

Run: ``python benchmarks/stiff.py [--rtols 1e-6 1e-8]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import ROOT, machine
from constraints import FACTORS as CONSTRAINT_FACTORS
from constraints import error
from make_chain import chain_text

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

#: rtol factors of the compiled runs: benchmarks/constraints.py's, down to 1e-6
FACTORS = (*CONSTRAINT_FACTORS, *(round(10 ** (k / 4), 9) for k in range(-17, -25, -1)))


def spring_chain(n: int = 10, k: float = 1e4, d: float = 1e3) -> str:
    """``n`` unit masses on a line, each joined to the one before (the first to the
    wall) by a spring ``k`` and a damper ``d``; a force ``sin 5t`` on the first."""
    lines = [f"m = 1; k = {k:g}; d = {d:g};"]
    for i in range(1, n + 1):
        lines.append(f"B{i} | Sx(x{i}) | m(m), Jx(0), Jy(0), Jz(0);")
    lines.append("C1.x1 = k; D1.x1 = d;")
    for i in range(2, n + 1):
        lines.append(f"e{i} = x{i} - x{i - 1}; C{i}.e{i} = k; D{i}.e{i} = d;")
    lines += ["Pf.x1 = sin(5*t);", f"INITIAL := t(0), x{n}(0.01);", "TIME := t(0, 10);"]
    return "\n".join(lines)


def stiff_joint_chain(n: int = 10, c: float = 100.0, d: float = 100.0) -> str:
    """The spatial ``n``-link chain with a spring ``c`` and a damper ``d`` in every
    joint."""
    joints = "\n".join(f"Cj{k}.q{k} = {c:g}; Dj{k}.q{k} = {d:g};" for k in range(1, n + 1))
    return chain_text(n) + joints + "\n"


def models() -> list[tuple[str, kidym.Model]]:
    return [("andrews_squeezer",
             kidym.load(ROOT / "examples" / "andrews_squeezer" / "andrews_squeezer.kdm")),
            ("spring_chain(10)", kidym.parse(spring_chain())),
            ("stiff chain(10)", kidym.parse(stiff_joint_chain()))]


def ladder(cs: CompiledSystem, jac: str, rtol: float, ref: np.ndarray, kw: dict) -> list:
    """``(error, best wall, nfev, rtol)`` of compiled BDF runs down the rtol ladder."""
    out = []
    for factor in FACTORS:
        tol = dict(rtol=rtol * factor, atol=rtol * factor * 1e-3)
        r = kidym.simulate(cs, method="BDF", jacobian=jac, **tol, **kw)
        wall = min(kidym.simulate(cs, method="BDF", jacobian=jac, **tol,
                                  **kw).stats["wall_time_s"]
                   for _ in range(5))
        out.append((error(r.y, ref), wall, r.nfev, rtol * factor))
    return out


def fastest(runs: list, bound: float) -> tuple | None:
    """The fastest run of ``runs`` whose error is at most ``bound``."""
    ok = [r for r in runs if r[0] <= bound]
    return min(ok, key=lambda r: r[1]) if ok else None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-6, 1e-8])
    args = ap.parse_args(argv)
    print(machine())
    print("SciPy Radau/BDF (NumPy right-hand side, analytic Jacobian) at rtol, atol = "
          "rtol*1e-3; compiled CVODE BDF with the analytic (an) or difference-quotient (fd) "
          "Jacobian at equal accuracy; wall seconds of the integration; err = max over "
          "outputs of |y - y_ref|/(1 + |y_ref|)")
    print(f"{'model':<18}{'rtol':>6}{'Radau':>9}{'err':>9}{'BDF':>9}{'err':>9}"
          f"{'BDF an':>9}{'BDF fd':>9}{'x Radau':>9}{'x BDF':>8}{'fd/an':>7}"
          f"{'nfev an/fd/Radau':>20}")
    for name, model in models():
        eq = kidym.derive(model)
        cs, ns = CompiledSystem.build(eq, jacobian=True), NumpySystem.build(eq)
        kw = dict(t_end=model.t_end, n_points=101)
        ref = kidym.simulate(cs, method="Fehlberg78", rtol=1e-13, atol=1e-16, **kw).y
        for rtol in args.rtols:
            atol = rtol * 1e-3
            scipy = {}
            for method in ("Radau", "BDF"):
                start = time.perf_counter()
                r = kidym.simulate(ns, method=method, rtol=rtol, atol=atol, **kw)
                scipy[method] = (error(r.y, ref), time.perf_counter() - start, r.nfev)
            an = ladder(cs, "analytic", rtol, ref, kw)
            fd = ladder(cs, "fd", rtol, ref, kw)
            at_radau = [fastest(runs, scipy["Radau"][0]) for runs in (an, fd)]
            at_bdf = fastest(an, scipy["BDF"][0])
            if None in at_radau or at_bdf is None:
                print(f"{name:<18}{rtol:6.0e}  no compiled setting reached SciPy's error "
                      f"{min(scipy['Radau'][0], scipy['BDF'][0]):.1e}")
                continue
            a, f = at_radau
            counts = f"{a[2]}/{f[2]}/{scipy['Radau'][2]}"
            print(f"{name:<18}{rtol:6.0e}{scipy['Radau'][1]:9.3f}{scipy['Radau'][0]:9.1e}"
                  f"{scipy['BDF'][1]:9.3f}{scipy['BDF'][0]:9.1e}{a[1]:9.4f}{f[1]:9.4f}"
                  f"{scipy['Radau'][1] / a[1]:8.0f}x{scipy['BDF'][1] / at_bdf[1]:7.0f}x"
                  f"{f[1] / a[1]:6.2f}x{counts:>20}",
                  flush=True)


if __name__ == "__main__":
    main()
