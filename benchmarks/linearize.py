"""Linearisation speed: kidym vs SymPy ``KanesMethod.linearize()`` on the spatial n-link chain.

Both linearise the chain of ``examples/chain/make_chain.py`` about the same state (every
``q_k`` 0.3 or −0.2, every speed 0.1) with numeric parameters, from the model to the
numeric ``A``: kidym parses, derives, forms the named partial derivatives
(:mod:`kidym.analysis.derivatives`) and evaluates them; SymPy builds the chain with
``KanesMethod`` (``benchmarks/_kane_chain.py``'s construction) and calls
``linearize(A_and_B=True, op_point=…)`` with the accelerations at the point supplied and
the parameters substituted. SymPy runs in a child process under a time budget
(``--budget`` seconds, default 120): past it the row says ``> budget``. Where both
finish, the largest difference of their ``A`` is printed too. The last column is kidym
at the hanging equilibrium (every ``q``, speed 0): ``ẇ = 0`` there, so the derivatives
of the mass matrix are not formed (:class:`kidym.analysis.derivatives.StateDerivatives`).

Run: ``python benchmarks/linearize.py [--ns 5 10 20] [--budget 120]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine
from make_chain import chain_text

import kidym

PARAMS = {"m": 1.0, "l": 0.5, "Jx": 0.025, "Jy": 0.02, "Jz": 0.005, "g": 9.81}


def point(n: int) -> dict[str, float]:
    """The operating point: ``q_k`` = 0.3 (odd k) or −0.2, speeds 0.1."""
    out = {f"q{k}": (0.3 if k % 2 else -0.2) for k in range(1, n + 1)}
    out.update({f"q{k}'t": 0.1 for k in range(1, n + 1)})
    return out


def kidym_A(n: int, at_rest: bool = False) -> tuple[float, np.ndarray]:
    """Seconds from the model text to ``A`` (at the moving state, or hanging at rest,
    where ``ẇ = 0`` and the derivatives of ``M`` are not needed), and ``A``."""
    start = time.perf_counter()
    eq = kidym.derive(kidym.parse(chain_text(n)))
    state = {k: 0.0 for k in point(n)} if at_rest else point(n)
    lin = kidym.linearize(eq, state)
    return time.perf_counter() - start, lin.A


def sympy_A(n: int) -> np.ndarray:
    import sympy as sp
    from sympy.physics.mechanics import (
        KanesMethod,
        Point,
        ReferenceFrame,
        RigidBody,
        dynamicsymbols,
        inertia,
    )

    q = dynamicsymbols(f"q1:{n + 1}")
    u = dynamicsymbols(f"u1:{n + 1}")
    m, l, jx, jy, jz, g = sp.symbols("m l Jx Jy Jz g")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    parent, joint, bodies, loads = N, O, [], []
    for k in range(n):
        if k > 0:
            nxt = joint.locatenew(f"P{k + 1}", -l * parent.z)
            nxt.v2pt_theory(joint, N, parent)
            joint = nxt
        frame = ReferenceFrame(f"L{k + 1}")
        axis = parent.x if k % 2 == 0 else parent.y
        frame.orient_axis(parent, axis, q[k])
        frame.set_ang_vel(parent, u[k] * axis)
        centre = joint.locatenew(f"G{k + 1}", -l / 2 * frame.z)
        centre.v2pt_theory(joint, N, frame)
        bodies.append(RigidBody(f"B{k + 1}", centre, frame, m,
                                (inertia(frame, jx, jy, jz), centre)))
        loads.append((centre, -m * g * N.z))
        parent = frame
    km = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[ui - qi.diff() for qi, ui in zip(q, u)])
    km.kanes_equations(bodies, loads)
    pt = point(n)
    num = {sp.Symbol(k): v for k, v in PARAMS.items()}
    at = {**{qk: pt[f"q{k + 1}"] for k, qk in enumerate(q)},
          **{uk: pt[f"q{k + 1}'t"] for k, uk in enumerate(u)}}
    Mf = km.mass_matrix_full.subs(at).subs(num)
    Ff = km.forcing_full.subs(at).subs(num)
    x = np.linalg.solve(np.array(Mf, float), np.array(Ff, float).ravel())
    t = dynamicsymbols._t
    acc = {uk.diff(t): x[n + k] for k, uk in enumerate(u)}
    qd = {qk.diff(t): x[k] for k, qk in enumerate(q)}
    A, _B, _r = km.linearize(A_and_B=True, op_point=[at, acc, qd, num], linear_solver="LU")
    return np.array(A.evalf(), dtype=float)


def _child(n: int, conn) -> None:
    start = time.perf_counter()
    A = sympy_A(n)
    conn.send((time.perf_counter() - start, A))


def time_sympy(n: int, budget: float) -> tuple[float, np.ndarray] | None:
    """Seconds and ``A``, or ``None`` past ``budget``."""
    parent, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=_child, args=(n, child))
    proc.start()
    if parent.poll(budget):
        out = parent.recv()
        proc.join()
        return out
    proc.terminate()
    proc.join()
    return None


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--budget", type=float, default=120.0,
                    help="seconds allowed to SymPy per n (default 120)")
    args = ap.parse_args(argv)
    print(machine())
    print(f"{'n':>3} {'kidym [s]':>10} {'SymPy [s]':>10} {'SymPy/kidym':>12} {'max |ΔA|':>10}"
          f" {'kidym at rest [s]':>18}")
    for n in args.ns:
        ours, A = kidym_A(n)
        rest, _ = kidym_A(n, at_rest=True)
        ref = time_sympy(n, args.budget)
        if ref is None:
            ratio = f"> {args.budget / ours:.0f}x"
            print(f"{n:>3} {ours:10.3f} {'> budget':>10} {ratio:>12} {'-':>10} {rest:18.3f}",
                  flush=True)
        else:
            theirs, As = ref
            print(f"{n:>3} {ours:10.3f} {theirs:10.2f} {theirs / ours:11.0f}x "
                  f"{np.abs(A - As).max():10.2g} {rest:18.3f}", flush=True)


if __name__ == "__main__":
    main()
