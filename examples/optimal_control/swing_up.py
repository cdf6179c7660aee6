"""Swing-up of the cart-pole as an optimal-control problem: CasADi's Opti and IPOPT on
the equations kidym derived (``kidym.to_casadi``), checked by kidym's own engine.

The pole starts hanging at rest (``theta = 0``) and must stand upright at rest
(``theta = pi``) with the cart back at ``x = 0`` after ``T`` seconds, the force on the
cart bounded, ``|Fc| <= F_MAX``, and the control effort ``∫ Fc² dt`` least. Direct
multiple shooting: ``N`` intervals with a constant force on each, the dynamics
``ẋ = f(x, u, p)`` of the exported CasADi function integrated by ``STEPS`` classical
Runge–Kutta steps per interval.

Then the optimal forces, piecewise constant, are applied to the model in kidym's own
NumPy engine (DOP853, ``rtol = 1e-10``), interval by interval, and the state it reaches
is compared with the target: the difference is the transcription's Runge–Kutta error
(``h = T/(N·STEPS)``, fourth order), which the bound ``TOLERANCE`` leaves a wide margin.

Run: ``python examples/optimal_control/swing_up.py`` (a few seconds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import casadi as ca
import numpy as np

import kidym
from kidym.simulation.simulate import NumpySystem

HERE = Path(__file__).resolve().parent
T = 2.0            # horizon [s]
N = 40             # control intervals
STEPS = 4          # Runge–Kutta steps per interval
F_MAX = 12.0       # force bound [N]: the optimal force reaches it
#: Bound on the re-simulated states' distance from the target and from the optimal
#: trajectory (m, rad, m/s, rad/s): the transcription's Runge–Kutta error is about 4e-5
#: here (twice the steps divide it by about 20: fourth order), so a margin of 25.
TOLERANCE = 1e-3


def solve(model_path: Path = HERE / "cart_pole.kdm") -> dict:
    """The optimal swing-up: states at the grid times, forces, IPOPT's status."""
    eq = kidym.derive(kidym.load(model_path))
    cm = kidym.to_casadi(eq, inputs=["Fc"])
    _u, p = cm.values()
    target = np.array([0.0, np.pi, 0.0, 0.0])     # x, theta, x't, theta't
    h = T / N / STEPS

    def interval(x, u):
        for _ in range(STEPS):            # classical Runge–Kutta on kidym's f(x, u, p)
            k1 = cm.f(x, u, p)
            k2 = cm.f(x + h / 2 * k1, u, p)
            k3 = cm.f(x + h / 2 * k2, u, p)
            k4 = cm.f(x + h * k3, u, p)
            x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return x

    opti = ca.Opti()
    X = opti.variable(4, N + 1)
    U = opti.variable(1, N)
    opti.minimize(ca.sumsqr(U) * T / N)
    opti.subject_to(X[:, 0] == cm.initial_state())
    opti.subject_to(X[:, N] == target)
    for k in range(N):
        opti.subject_to(X[:, k + 1] == interval(X[:, k], U[:, k]))
    opti.subject_to(opti.bounded(-F_MAX, U, F_MAX))
    # a first guess: the pole turned over at a constant rate, no force
    opti.set_initial(X[1, :], np.linspace(0.0, np.pi, N + 1))
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    sol = opti.solve()
    return {"equations": eq, "names": cm.state_names, "states": sol.value(X),
            "forces": np.atleast_1d(sol.value(U)), "target": target,
            "status": opti.stats()["return_status"]}


def resimulate(eq: kidym.Equations, forces: np.ndarray) -> np.ndarray:
    """The model run in kidym's NumPy engine with the forces held over each interval;
    the states at the grid times, shape (4, N + 1)."""
    system = NumpySystem.build(eq)
    names = system.state_names
    y = np.zeros((len(names), len(forces) + 1))
    for k, force in enumerate(forces):
        t0, t1 = k * T / N, (k + 1) * T / N
        run = kidym.simulate(system, t_start=t0, t_end=t1, n_points=2, rtol=1e-10,
                             atol=1e-12, initial=dict(zip(names, y[:, k])),
                             parameters={"Fc": float(force)})
        y[:, k + 1] = [run[n][-1] for n in names]
    return y


def main() -> int:
    opt = solve()
    print(f"IPOPT: {opt['status']}")
    print(f"effort ∫Fc² dt = {np.sum(opt['forces'] ** 2) * T / N:.1f} N²s, largest force "
          f"{np.abs(opt['forces']).max():.1f} N")
    y = resimulate(opt["equations"], opt["forces"])
    end = y[:, -1]
    print("kidym's run with these forces ends at "
          + ", ".join(f"{n} = {round(v, 4) + 0.0:.4f}" for n, v in zip(opt["names"], end)))
    miss = float(np.abs(end - opt["target"]).max())
    along = float(np.abs(y - opt["states"]).max())
    ok = opt["status"] == "Solve_Succeeded" and miss <= TOLERANCE and along <= TOLERANCE
    print(f"distance from the target below {TOLERANCE:g}: {'yes' if miss <= TOLERANCE else 'NO'}"
          f"; from the optimal trajectory at every grid time: "
          f"{'yes' if along <= TOLERANCE else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
