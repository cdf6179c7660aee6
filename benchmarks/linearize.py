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

With ``--symbolic`` the symbolic linearisation instead, at the same state with the
parameters as symbols: kidym from the model text to the printed mechanical form
(``kidym linearize --symbolic``: parse, derive, ``linearize``, ``symbolic().to_text()``;
the next column also converts every matrix to SymPy), SymPy from building the chain with
``KanesMethod`` to ``Linearizer.linearize(op_point=…)``'s ``M, A, B`` (the form
``M δẋ = A δx + B δr``, no inverse: SymPy's cheapest symbolic result), with the
accelerations at the point given as numbers to both. Every run is a child process forked
from one that has imported both and linearised a 2-link chain both ways (no import
timed, nothing cached between runs); ``--repeat`` alternated runs of each, their median
(SymPy's repeated only while a run takes under 60 s). ``max |ΔA|`` compares ``A`` of
both forms with the parameters' values put in (SymPy's ``M⁻¹A``, kidym's form reduced
as in ``tests/analysis/test_linear_form.py``) with kidym's numeric ``A``.

Run: ``python benchmarks/linearize.py [--ns 5 10 20] [--budget 120]``;
``python benchmarks/linearize.py --symbolic [--ns 4 6 8] [--repeat 3]``
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


def _kane(n: int):
    """The chain by ``KanesMethod`` (equations formed), its ``q`` and ``u``."""
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
    return km, q, u


def _accelerations(km, at: dict, num: dict) -> np.ndarray:
    """``[q̇; u̇]`` at the point with the parameters' values."""
    Mf = km.mass_matrix_full.subs(at).subs(num)
    Ff = km.forcing_full.subs(at).subs(num)
    return np.linalg.solve(np.array(Mf, float), np.array(Ff, float).ravel())


def sympy_A(n: int) -> np.ndarray:
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    km, q, u = _kane(n)
    pt = point(n)
    num = {sp.Symbol(k): v for k, v in PARAMS.items()}
    at = {**{qk: pt[f"q{k + 1}"] for k, qk in enumerate(q)},
          **{uk: pt[f"q{k + 1}'t"] for k, uk in enumerate(u)}}
    x = _accelerations(km, at, num)
    t = dynamicsymbols._t
    acc = {uk.diff(t): x[n + k] for k, uk in enumerate(u)}
    qd = {qk.diff(t): x[k] for k, qk in enumerate(q)}
    A, _B, _r = km.linearize(A_and_B=True, op_point=[at, acc, qd, num], linear_solver="LU")
    return np.array(A.evalf(), dtype=float)


def kidym_symbolic(n: int, to_sympy: bool = False) -> dict[str, np.ndarray]:
    """``kidym linearize --symbolic`` on the chain: the printed form (and, with
    ``to_sympy``, every matrix as SymPy's); returns the matrices with the parameters'
    values put in, ``A`` of the form reduced, and the numeric ``A``."""
    eq = kidym.derive(kidym.parse(chain_text(n)))
    lin = kidym.linearize(eq, point(n))
    form = lin.symbolic()
    form.to_text()
    if to_sympy:
        form.matrices  # noqa: B018 (converts every matrix)
    return {"form": form, "lin": lin}


def reduced_A(form, lin) -> np.ndarray:
    """``A`` of the form without constraints, with the parameters' values:
    ``[Q_q Q_w; −M⁻¹K −M⁻¹C]``."""
    n = {k: np.array(form[k].xreplace({s: PARAMS[s.name] for s in form[k].free_symbols})
                     .evalf(), dtype=float) for k in ("Q_q", "Q_w", "M", "K", "C")}
    lower = -np.linalg.solve(n["M"], np.hstack([n["K"], n["C"]]))
    return np.vstack([np.hstack([n["Q_q"], n["Q_w"]]), lower])


def sympy_symbolic(n: int):
    """SymPy's symbolic linearisation of the chain at :func:`point`: ``KanesMethod``,
    then ``Linearizer.linearize(op_point=…)`` (parameters as symbols, the accelerations
    at the point as numbers); returns ``(M, A)`` of ``M δẋ = A δx + B δr``."""
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    km, q, u = _kane(n)
    pt = point(n)
    num = {sp.Symbol(k): v for k, v in PARAMS.items()}
    at = {**{qk: pt[f"q{k + 1}"] for k, qk in enumerate(q)},
          **{uk: pt[f"q{k + 1}'t"] for k, uk in enumerate(u)}}
    x = _accelerations(km, at, num)
    t = dynamicsymbols._t
    acc = {uk.diff(t): x[n + k] for k, uk in enumerate(u)}
    qd = {qk.diff(t): x[k] for k, qk in enumerate(q)}
    M, A, _B = km.to_linearizer(linear_solver="LU").linearize(op_point=[at, acc, qd])
    return M, A


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


def _timed(fn, n: int, after, conn) -> None:
    start = time.perf_counter()
    out = fn(n)
    seconds = time.perf_counter() - start
    conn.send((seconds, after(out) if after is not None else None))


def forked(fn, n: int, budget: float, after=None):
    """``(seconds, after(fn(n)))`` in a child process forked from this one (only
    ``fn(n)`` timed), or ``None`` past ``budget`` seconds."""
    parent, child = mp.Pipe()
    proc = mp.get_context("fork").Process(target=_timed, args=(fn, n, after, child))
    proc.start()
    if parent.poll(budget):
        out = parent.recv()
        proc.join()
        return out
    proc.terminate()
    proc.join()
    return None


def _text(n: int) -> dict:
    return kidym_symbolic(n)


def _with_sympy(n: int) -> dict:
    return kidym_symbolic(n, to_sympy=True)


def _kidym_arrays(out: dict) -> tuple[np.ndarray, np.ndarray]:
    """kidym's form reduced to ``A``, and its numeric ``A``."""
    return reduced_A(out["form"], out["lin"]), out["lin"].A


def _sympy_reduced(out) -> np.ndarray:
    """``M⁻¹A`` of SymPy's form with the parameters' values."""
    import sympy as sp

    M, A = out
    num = {sp.Symbol(k): v for k, v in PARAMS.items()}
    return np.linalg.solve(np.array(M.subs(num).evalf(), dtype=float),
                           np.array(A.subs(num).evalf(), dtype=float))


def symbolic_table(ns: list[int], budget: float, repeat: int) -> None:
    """The ``--symbolic`` table (see the module docstring)."""
    for warm in (_text, _with_sympy, sympy_symbolic):
        warm(2)
    print(f"{'n':>3} {'kidym text [s]':>14} {'+ SymPy [s]':>12} {'SymPy [s]':>10} "
          f"{'SymPy/kidym':>12} {'max |ΔA|':>10}")
    for n in ns:
        ours, conv, theirs, arrays = [], [], [], {}
        for k in range(repeat):
            run = forked(_text, n, budget, _kidym_arrays)
            ours.append(run[0])
            arrays["kidym"] = run[1]
            conv.append(forked(_with_sympy, n, budget)[0])
            if k == 0 or (theirs and theirs[-1] is not None and theirs[-1] < 60.0):
                ref = forked(sympy_symbolic, n, budget, _sympy_reduced)
                theirs.append(None if ref is None else ref[0])
                if ref is not None:
                    arrays["sympy"] = ref[1]
        ours_s, conv_s = float(np.median(ours)), float(np.median(conv))
        done = [x for x in theirs if x is not None]
        if not done:
            print(f"{n:>3} {ours_s:14.3f} {conv_s:12.3f} {'> budget':>10} "
                  f"{'> ' + format(budget / ours_s, '.0f') + 'x':>12} {'-':>10}", flush=True)
            continue
        theirs_s = float(np.median(done))
        A_form, A_num = arrays["kidym"]
        err = max(np.abs(A_form - A_num).max(), np.abs(arrays["sympy"] - A_num).max())
        print(f"{n:>3} {ours_s:14.3f} {conv_s:12.3f} {theirs_s:10.2f} "
              f"{theirs_s / ours_s:11.0f}x {err:10.2g}", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=None)
    ap.add_argument("--budget", type=float, default=120.0,
                    help="seconds allowed to SymPy per n (default 120)")
    ap.add_argument("--symbolic", action="store_true",
                    help="the symbolic linearisation vs SymPy's Linearizer")
    ap.add_argument("--repeat", type=int, default=3,
                    help="--symbolic: alternated runs of each, their median (default 3)")
    args = ap.parse_args(argv)
    print(machine())
    if args.symbolic:
        symbolic_table(args.ns or [4, 6, 8], args.budget, args.repeat)
        return
    args.ns = args.ns or [5, 10, 20]
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
