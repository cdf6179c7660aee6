"""What one call of ``CompiledSystem.rhs`` costs from Python, and the batched call.

For the double pendulum and the n-link chain (``examples/chain``), over the same
random states, µs per state (best of 5):

* ``old``: the call path before the thin one (kept here only to compare): the
  constants computed for every call, a ctypes pointer built for every array;
* ``thin``: ``CompiledSystem.rhs(t, y, p)`` now (a new array returned each call);
* ``ctypes``: the bare C function ``kidym_rhs`` through ``ctypes`` with every pointer
  made beforehand: the floor of any call from Python;
* ``batch``: ``CompiledSystem.rhs_batch(t, Y, p)`` over all the states in one call
  (the loop in C), per state;
* ``pin.aba``: Pinocchio's articulated-body algorithm on the same chain (if the
  ``pin`` package is installed), called the same way, after checking that it gives
  the same accelerations.

``thin-ctypes`` is what the thin call adds to the C call.

Run: ``python benchmarks/rhs_call.py [--ns 4 12 24] [--states 200]``
"""

from __future__ import annotations

import argparse
import ctypes

import numpy as np
from _common import ROOT, best_time, machine, optional
from make_chain import chain_text
from rhs import pinocchio_chain

import kidym
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem

_D = ctypes.POINTER(ctypes.c_double)


def old_rhs(cs: CompiledSystem, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``CompiledSystem.rhs`` as it was before the thin call (a copy for comparison)."""
    y = np.ascontiguousarray(y, dtype=float)
    p = np.ascontiguousarray(p, dtype=float)
    c = np.zeros(max(cs.code.n_constants, 1))
    cs.lib.kidym_constants(p.ctypes.data_as(_D), c.ctypes.data_as(_D))
    ydot = np.empty(cs.n_y)
    status = cs.lib.kidym_rhs(float(t), y.ctypes.data_as(_D), p.ctypes.data_as(_D),
                              c.ctypes.data_as(_D), ydot.ctypes.data_as(_D))
    if status:
        raise RuntimeError(f"kidym_rhs failed ({status})")
    return ydot


def measure(name: str, eq, Y: np.ndarray, pin, n_links: int | None) -> str:
    """One line of the table for the model of ``eq`` over the states ``Y``."""
    cs = CompiledSystem.build(eq)
    p = cs.parameter_vector()
    K, n_y = Y.shape
    rows = list(Y)
    # every route gives the same numbers before it is timed
    thin = cs.rhs_batch(0.0, Y, p)
    ref = NumpySystem.build(eq).rhs(0.0, rows[0], p)
    assert np.allclose(thin[0], ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    for y, f in zip(rows, thin):
        assert np.array_equal(cs.rhs(0.0, y, p), f)
        assert np.array_equal(old_rhs(cs, 0.0, y, p), f)

    def run_old(cs=cs, rows=rows, p=p):
        for y in rows:
            old_rhs(cs, 0.0, y, p)

    def run_thin(rhs=cs.rhs, rows=rows, p=p):
        for y in rows:
            rhs(0.0, y, p)

    c = cs.constants(p)
    out = np.empty(n_y)
    ptrs = [y.ctypes.data for y in rows]
    pp, cp, op = p.ctypes.data, c.ctypes.data, out.ctypes.data

    def run_ctypes(fn=cs.lib.kidym_rhs, ptrs=ptrs, pp=pp, cp=cp, op=op):
        for yp in ptrs:
            fn(0.0, yp, pp, cp, op)

    def run_batch(batch=cs.rhs_batch, Y=Y, p=p):
        batch(0.0, Y, p)

    per = 1e6 / K
    t_old, t_thin = best_time(run_old) * per, best_time(run_thin) * per
    t_ct, t_batch = best_time(run_ctypes) * per, best_time(run_batch) * per
    t_pin = float("nan")
    if pin is not None and n_links is not None:
        model, data = pinocchio_chain(pin, n_links)
        qs = [np.ascontiguousarray(y[:n_links]) for y in rows]
        vs = [np.ascontiguousarray(y[n_links:]) for y in rows]
        tau = np.zeros(n_links)
        acc = pin.aba(model, data, qs[0], vs[0], tau)
        err = np.abs(acc - thin[0, n_links:]).max() / np.abs(thin[0, n_links:]).max()
        assert err < 1e-9, f"pinocchio disagrees with kidym for {name}: {err:.2e}"

        def run_pin(aba=pin.aba, model=model, data=data, qs=qs, vs=vs, tau=tau):
            for q, v in zip(qs, vs):
                aba(model, data, q, v, tau)

        t_pin = best_time(run_pin) * per

    def fmt(x: float, w: int, d: int = 2) -> str:
        return f"{'-':>{w}}" if np.isnan(x) else f"{x:{w}.{d}f}"

    return (f"{name:<16} {n_y:>4} {t_old:7.2f} {t_thin:7.2f} {t_ct:7.2f} {t_batch:7.2f} "
            f"{fmt(t_pin, 8)} {t_thin - t_ct:12.2f} {t_old / t_thin:7.1f}x "
            f"{fmt(t_pin / t_thin, 7)}x {t_thin / t_batch:8.1f}x")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=[4, 12, 24],
                    help="links of the chains (default 4 12 24)")
    ap.add_argument("--states", type=int, default=200)
    args = ap.parse_args(argv)
    pin = optional("pinocchio")
    print(machine())
    if pin is None:
        print("note: pinocchio (pip package `pin`) not installed: its column is skipped")
    print("microseconds per state (best of 5 over the same states); ratios side by side")
    print(f"{'model':<16} {'n_y':>4} {'old':>7} {'thin':>7} {'ctypes':>7} {'batch':>7} "
          f"{'pin.aba':>8} {'thin-ctypes':>12} {'old/thin':>8} {'pin/thin':>8} "
          f"{'thin/batch':>9}")
    rng = np.random.default_rng(0)
    pendulum = kidym.derive(kidym.load(ROOT / "examples/double_pendulum/double_pendulum.kdm"))
    models = [("double_pendulum", pendulum, None)]
    models += [(f"chain n={n}", kidym.derive(kidym.parse(chain_text(n))), n) for n in args.ns]
    for name, eq, n_links in models:
        n_y = len(eq.coordinates) + len(eq.speeds)
        Y = np.ascontiguousarray(rng.uniform(-1.0, 1.0, (args.states, n_y)))
        print(measure(name, eq, Y, pin, n_links), flush=True)


if __name__ == "__main__":
    main()
