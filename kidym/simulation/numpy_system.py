"""The NumPy engine's system: :class:`NumpySystem`, the right-hand side of a model's
equations as generated Python over NumPy (:mod:`kidym.simulation.numpy_engine`), with
the evaluations both engines' checks call (the mass matrix and forcing, the constraint
block, outputs, events). Its runs — SciPy's solvers, events, projections, the monitors —
are :mod:`kidym.simulation.simulate`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from kidym.eom.constraints import (
    ConstraintSolveError,
    Stabilization,
    solve_augmented,
    split,
)
from kidym.eom.controls import ControlSolveError, solve_controls
from kidym.eom.controls import split as split_controls
from kidym.eom.equations import Equations
from kidym.errors import SimulationError
from kidym.simulation import faults
from kidym.simulation.energy import POWER
from kidym.simulation.inputs import InputBinding
from kidym.simulation.layout import parameter_vector
from kidym.simulation.numpy_engine import generate_python, needs_accelerations, tolerant

#: Projection at the output times (see :class:`Stabilization`).
DEFAULT_STABILIZATION = Stabilization()


METHODS = ("DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA")


UNDEFINED_HINT = ("look for a formula undefined at this state (sqrt or log of a negative, "
                   "division by zero), or a blow-up; shorten t_end or tighten rtol")


class AbortError(Exception):
    """Raised inside the right-hand side to stop the integrator with a diagnosis."""


@dataclass(frozen=True)
class NumpySystem:
    """The numeric workspace of one model: generated function and its layout.

    Attributes
    ----------
    equations : Equations
        What it evaluates.
    state_names : tuple of str
        ``y = [q, w]`` names.
    output_names : tuple of str
        Recorded outputs (model outputs, then ``energy``).
    function : callable
        ``f(t, y, p) -> (q̇, M, F, outputs)``, for output times.
    source : str
        Its generated Python source.
    rhs_function : callable
        ``f(t, y, p) -> (q̇, M, F)``: the right-hand side alone, without the outputs.
    accelerations : bool
        Whether ``function`` takes ``y = [q, w, ẇ]`` (an output uses the accelerations).
    """

    equations: Equations
    state_names: tuple[str, ...]
    output_names: tuple[str, ...]
    function: object
    source: str
    rhs_function: object
    accelerations: bool = False
    stabilization: Stabilization = DEFAULT_STABILIZATION
    inputs: InputBinding | None = None

    def _p(self, t: float, y, p) -> list[float]:
        """The parameter vector as the generated functions take it: with the model's
        external inputs at ``(t, y)`` appended (:mod:`kidym.simulation.inputs`)."""
        values = np.asarray(p, float).tolist()
        if self.inputs is None:
            if self.equations.inputs:
                raise RuntimeError(f"model `{self.equations.model.name}` has inputs "
                                 f"({', '.join(self.equations.model.inputs)}) that are not "
                                 "bound: give them with inputs={…}")
            return values
        return self.inputs.extend(float(t), y, values)

    def with_inputs(self, binding: InputBinding | None) -> NumpySystem:
        """The same system evaluating the external inputs of ``binding``."""
        return self if binding is None else dataclasses.replace(self, inputs=binding)

    @contextlib.contextmanager
    def bound(self, binding: InputBinding) -> Iterator[NumpySystem]:
        """:meth:`with_inputs` as the context both engines' systems offer
        (:func:`kidym.simulation.inputs.bound_system`)."""
        yield self.with_inputs(binding)

    @classmethod
    def build(cls, eq: Equations) -> NumpySystem:
        """Generate the Python evaluation of ``eq``."""
        eq.require_motion()
        outputs = dict(eq.outputs_named)
        if "energy" not in outputs:   # (a model's own `energy` has its own `energy't`)
            outputs["energy"] = eq.energy_named
            outputs.setdefault(POWER, eq.power_named)   # for the energy balance
        fn = generate_python(eq, outputs)
        # the right-hand side alone: outputs are evaluated at output times only
        bare = generate_python(eq)
        names = tuple(str(s) for s in (*eq.coordinates, *eq.speeds))
        multipliers = eq.constraints.multiplier_names if eq.constraints is not None else ()
        if eq.controls is not None:   # the controls, solved with ẇ
            multipliers = (*multipliers, *eq.controls.control_names)
        return cls(eq, names, (*outputs, *multipliers), fn.function, fn.source,
                   bare.function, needs_accelerations(eq, outputs))

    def parameter_vector(self, overrides: Mapping[str, float] | None = None) -> np.ndarray:
        """Parameter values in model order, with ``overrides`` applied."""
        return parameter_vector(self.equations.model, overrides)

    def dynamics(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F)`` at one state, as generated (``F`` with the constraint or
        control block appended, where the model has one)."""
        return self.rhs_function(float(t), np.asarray(y, float).tolist(),
                                 self._p(t, y, p))

    def evaluate(self, t: float, y: np.ndarray, p: np.ndarray) -> tuple:
        """``(q̇, M, F, outputs)`` at one state; a math domain fault is a SimulationError.

        Outputs that use the accelerations get ``ẇ = M⁻¹F`` at that state.
        """
        y = np.asarray(y, float)
        if self.accelerations and y.size == len(self.state_names):
            y = np.concatenate([y, self.rhs(t, y, p)[self.equations.n_q:]])
        try:
            return self.function(float(t), y.tolist(), self._p(t, y, p))
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            raise SimulationError(
                f"a formula cannot be evaluated ({exc})", time=float(t),
                state=dict(zip(self.state_names, y)),
                hint=UNDEFINED_HINT, kind=faults.NON_FINITE) from exc

    def rhs(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``ẏ = [q̇, M⁻¹F]``; raises :class:`SimulationError` on singular ``M`` or NaN."""
        try:
            qdot, M, F = self.rhs_function(float(t), y.tolist(), self._p(t, y, p))
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            raise SimulationError(
                f"a formula cannot be evaluated ({exc})", time=float(t),
                state=dict(zip(self.state_names, y)), hint=UNDEFINED_HINT,
                kind=faults.NON_FINITE) from exc
        wdot, _lam = self._solve(t, y, M, F)
        ydot = np.concatenate([qdot, wdot])
        if not np.all(np.isfinite(ydot)):
            bad = [n for n, v in zip(self.state_names, ydot) if not np.isfinite(v)]
            raise SimulationError(
                "the right-hand side is not finite (NaN or infinity in the rates of "
                + ", ".join(bad) + ")", time=t, state=dict(zip(self.state_names, y)),
                hint=UNDEFINED_HINT, kind=faults.NON_FINITE)
        return ydot

    def rates(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``q̇ = B w + β`` at one state."""
        return np.asarray(self.rhs_function(float(t), np.asarray(y, float).tolist(),
                                            self._p(t, y, p))[0], float)

    def _solve(self, t: float, y: np.ndarray, M: np.ndarray, F: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(ẇ, λ)``: ``M ẇ = F``, or with constraints the augmented system; with
        controls ``(ẇ, u)`` (:func:`kidym.eom.controls.solve_controls`)."""
        eq = self.equations
        try:
            if eq.controls is not None:
                F0, cblock = split_controls(F, eq.n_w, eq.controls.r, eq.controls.s)
                return solve_controls(np.asarray(M, float), F0, cblock)
            if eq.constraints is None:
                return np.linalg.solve(M, F), np.empty(0)
            Fw, block = split(F, eq.n_w, eq.m)
            return solve_augmented(M, Fw, block, self.stabilization)
        except ControlSolveError as exc:
            names = ", ".join(f"`{eq.controls.names[i]}`" for i in exc.unreachable)
            raise SimulationError(
                str(exc) + (f" ({names})" if names else ""), time=t,
                state=dict(zip(self.state_names, y)),
                hint="the controls of `НЕИЗВЕСТНЫЕ` no longer change the acceleration of the "
                     "programmed constraint named here independently of the others (a "
                     "singular configuration of the mechanism, e.g. a stretched arm, or a "
                     "path that leaves the workspace); change the path or the controls",
                kind=faults.CONSTRAINTS) from exc
        except ConstraintSolveError as exc:
            raise SimulationError(
                str(exc), time=t, state=dict(zip(self.state_names, y)),
                hint="check masses and moments of inertia, and whether the constraints of "
                     "`УРАВНЕНИЯ` are independent (two of them saying the same thing) or the "
                     "loop reaches a dead-centre position here; a body of `КАЧЕНИЕ` meets a "
                     "surface whose normal is horizontal here (its no-slip rows are the x "
                     "and y components: turn the fixed axes so that z follows the normal)",
                kind=faults.SINGULAR if "mass matrix" in str(exc) else faults.CONSTRAINTS
            ) from exc
        except np.linalg.LinAlgError as exc:
            raise SimulationError(
                "the mass matrix is singular", time=t, state=dict(zip(self.state_names, y)),
                hint=faults.HINTS[faults.SINGULAR], kind=faults.SINGULAR) from exc

    def constraint_block(self, t: float, y: np.ndarray, p: np.ndarray):
        """``(M, F, Block)`` at one state (a model with constraints)."""
        eq = self.equations
        _qdot, M, F = self.rhs_function(float(t), np.asarray(y, float).tolist(),
                                 self._p(t, y, p))
        Fw, block = split(F, eq.n_w, eq.m)
        return np.asarray(M, float), Fw, block

    def outputs(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Output values at one state (accelerations, where used, from ``ẇ = M⁻¹F``;
        with constraints, the multipliers ``λ`` last; with controls, the controls ``u``)."""
        out = self.evaluate(t, y, p)[3]
        if self.equations.constraints is None and self.equations.controls is None:
            return out
        y = np.asarray(y, float)[:len(self.state_names)]
        _qdot, M, F = self.rhs_function(float(t), y.tolist(), self._p(t, y, p))
        _w, lam = self._solve(t, y, np.asarray(M, float), np.asarray(F, float))
        return np.concatenate([np.asarray(out, float), lam])


    def outputs_tolerant(self, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
        """:meth:`outputs` where they cannot all be evaluated (the state where a run
        failed): each output evaluated as the compiled engine does, NaN (or ±inf) only
        where its own formula fails; accelerations and multipliers NaN if ``ẇ`` cannot
        be solved for."""
        n_out = len(self.output_names)
        y = np.asarray(y, float)[:len(self.state_names)]
        if self.accelerations:
            try:
                wdot = self.rhs(t, y, p)[self.equations.n_q:]
            except (SimulationError, np.linalg.LinAlgError):
                wdot = np.full(self.equations.n_w, np.nan)
            y = np.concatenate([y, wdot])
        fn = tolerant(self.source)
        try:
            pv = [np.float64(v) for v in self._p(t, y, p)]
        except SimulationError:    # an input's callback fails here too
            return np.full(n_out, np.nan)
        with np.errstate(all="ignore"):
            try:
                out = np.asarray(fn(np.float64(t), list(y.astype(np.float64)),
                                    pv)[3], float)
            except (ZeroDivisionError, ValueError, OverflowError, TypeError):
                return np.full(n_out, np.nan)
        return np.concatenate([out, np.full(n_out - out.size, np.nan)])
