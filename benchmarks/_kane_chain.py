"""SymPy ``KanesMethod`` half of the derivation benchmark: the spatial n-link chain.

Link 1 ``L1 | Rx(q1) | Sz(-l/2), m, Jx, Jy, Jz;``; link ``k > 1``
``Lk~L(k-1) | Sz(-l), R<axis>(qk) | Sz(-l/2), m, Jx, Jy, Jz;`` with hinge axis ``x`` for odd
``k`` and ``y`` for even ``k``; gravity ``(0, 0, -g)``; generalized speeds ``u_k = q_k'``.

The chain is built the usual PyDy way (``orient_axis``, ``locatenew``, ``v2pt_theory``,
``RigidBody``, ``KanesMethod.kanes_equations``) up to the point where ``mass_matrix`` and
``forcing`` are formed, i.e. ready for code generation.

Run ``python benchmarks/_kane_chain.py [n ...]`` to print times and operation counts.
"""

from __future__ import annotations

import sys
import time

import sympy as sp
from sympy.core.cache import clear_cache
from sympy.physics.mechanics import (
    KanesMethod,
    Point,
    ReferenceFrame,
    RigidBody,
    dynamicsymbols,
    inertia,
)

__all__ = ["build_kane", "count_ops", "time_kane"]


def build_kane(n: int) -> tuple[sp.Matrix, sp.Matrix]:
    """Derive the ``n``-link chain with ``KanesMethod``.

    Parameters
    ----------
    n : int
        Number of links (``n >= 1``).

    Returns
    -------
    mass_matrix : sympy.Matrix
        ``n x n`` mass matrix ``M(q)`` (``KanesMethod.mass_matrix``).
    forcing : sympy.Matrix
        ``n x 1`` forcing ``F(q, u)`` with ``M u' = F`` (``KanesMethod.forcing``).
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    q = dynamicsymbols(f"q1:{n + 1}")
    u = dynamicsymbols(f"u1:{n + 1}")
    m, l, jx, jy, jz, g = sp.symbols("m l Jx Jy Jz g")

    frame_n = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(frame_n, 0)

    parent_frame = frame_n
    joint = origin
    bodies = []
    loads = []
    for k in range(n):
        if k > 0:
            child_joint = joint.locatenew(f"P{k + 1}", -l * parent_frame.z)
            child_joint.v2pt_theory(joint, frame_n, parent_frame)
            joint = child_joint
        frame = ReferenceFrame(f"L{k + 1}")
        axis = parent_frame.x if k % 2 == 0 else parent_frame.y
        frame.orient_axis(parent_frame, axis, q[k])
        frame.set_ang_vel(parent_frame, u[k] * axis)
        centre = joint.locatenew(f"G{k + 1}", -l / 2 * frame.z)
        centre.v2pt_theory(joint, frame_n, frame)
        bodies.append(
            RigidBody(f"B{k + 1}", centre, frame, m, (inertia(frame, jx, jy, jz), centre))
        )
        loads.append((centre, -m * g * frame_n.z))
        parent_frame = frame

    kd = [ui - qi.diff() for qi, ui in zip(q, u, strict=True)]
    kane = KanesMethod(frame_n, q_ind=q, u_ind=u, kd_eqs=kd)
    kane.kanes_equations(bodies, loads)
    return kane.mass_matrix, kane.forcing


def time_kane(n: int) -> float:
    """Time the ``KanesMethod`` derivation of the ``n``-link chain.

    SymPy's expression cache is cleared first so that repeated calls measure a cold build.

    Parameters
    ----------
    n : int
        Number of links.

    Returns
    -------
    float
        Wall-clock seconds (``time.perf_counter``) to build the model and form
        ``mass_matrix`` and ``forcing``.
    """
    clear_cache()
    start = time.perf_counter()
    build_kane(n)
    return time.perf_counter() - start


def count_ops(n: int) -> int:
    """Count the operations in the ``KanesMethod`` equations of the ``n``-link chain.

    Parameters
    ----------
    n : int
        Number of links.

    Returns
    -------
    int
        ``sympy.count_ops`` summed over all entries of ``mass_matrix`` and ``forcing``
        (unsimplified, as returned by ``KanesMethod``).
    """
    mass_matrix, forcing = build_kane(n)
    return sum(sp.count_ops(e) for e in (*mass_matrix, *forcing))


def main(argv: list[str]) -> None:
    """Print time and operation count for each requested chain length."""
    sizes = [int(a) for a in argv] or [2, 3, 5]
    print(f"{'n':>3} {'seconds':>10} {'ops':>10}")
    for n in sizes:
        seconds = time_kane(n)
        print(f"{n:>3} {seconds:>10.3f} {count_ops(n):>10}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
