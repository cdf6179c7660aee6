"""The energy balance of a run: ``E(t) − E(0) − W(t)``, the honest accuracy check.

``E = T + Π`` is conserved only by conservative systems; a damper, a force that is not
the gradient of a potential, a force or gravity that changes with time, or a prescribed
motion (``Sx(A*sin(w*t))``) changes it by the work ``W(t)`` it does. Both engines record
the power ``dE/dt`` along the motion as the output ``energy't``
(:attr:`kidym.eom.equations.Equations.power_named`: ``∂E/∂t + ∂E/∂q·q̇ + ∂E/∂w·ẇ``
with ``ẇ = M⁻¹F``), and ``W(t) = ∫ energy't dt`` is integrated over the output times by
the composite Simpson rule (:func:`cumulative_simpson`: SciPy's
:func:`scipy.integrate.cumulative_simpson` for a 1-D grid, the same operations in the
same order — identical numbers — without importing ``scipy.integrate``, half a second
of a compiled run's start; error ``O(h⁴)`` in the output step ``h``). Then

    ``B(t) = E(t) − E(0) − W(t)``

is zero on the exact motion of *every* model, so ``max |B|`` measures the accuracy of
the run; for a conservative model ``W = 0`` and it is the energy drift. It is stated
relative to ``max(max |E|, max |W|)``, the scale of the energy that moved, and as an
absolute number when that scale is 0 (a model at rest with ``E(0) = 0``). The
quadrature adds ``≈ h⁴ T max|d⁴P/dt⁴| / 180``: take more output points
(``n_points``) if that is not far below the tolerances.

The balance needs a motion: a run that stopped at its first output time (a failure at
``t = 0``: a singular mass matrix or a formula undefined at the start) has none, and an
``E`` or ``dE/dt`` that is not finite at an output time (recorded as NaN where the
failing state's outputs could not be evaluated) leaves ``B`` undefined. Then the balance
is *not available*, with the reason (:attr:`EnergyBalance.unavailable`), never a number:
a ``0`` would claim a perfect run and a ``nan`` explains nothing, and the two engines,
which differ in what they can evaluate at a failing state, say the same.

An event that resets the state (an impact, ``СОБЫТИЯ``) changes ``E`` by a jump that
is no work: the balance is then taken between such events, ``B`` restarting from 0 at
the first output time after each (between an event and that time ``B`` is constant on
the exact motion), so that it still measures the accuracy of the integration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The output holding ``dE/dt`` along the motion.
POWER = "energy't"


def _simpson_parts(y: np.ndarray, dx: np.ndarray) -> np.ndarray:
    """Simpson's integrals over the first interval of every three points (unequal
    steps; eqn (8) of Cartwright, "Simpson's rule cumulative integration with MS Excel
    and irregularly-spaced data", 2017), as SciPy computes them."""
    x21 = dx[:-1]
    x32 = dx[1:]
    f1 = y[:-2]
    f2 = y[1:-1]
    f3 = y[2:]
    x31 = x21 + x32
    x21_x31 = x21 / x31
    x21_x32 = x21 / x32
    x21x21_x31x32 = x21_x31 * x21_x32
    coeff1 = 3 - x21_x31
    coeff2 = 3 + x21x21_x31x32 + x21_x31
    coeff3 = -x21x21_x31x32
    return x21 / 6 * (coeff1 * f1 + coeff2 * f2 + coeff3 * f3)


def cumulative_simpson(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``∫ y dx`` from ``x[0]`` at every ``x`` (strictly increasing, at least three
    points), shape of ``y``: :func:`scipy.integrate.cumulative_simpson` with
    ``initial=0`` on a 1-D grid, operation for operation (tested equal)."""
    y = np.asarray(y, float)
    dx = np.diff(np.asarray(x, float))
    h1 = _simpson_parts(y, dx)
    h2 = np.flip(_simpson_parts(np.flip(y), np.flip(dx)))
    parts = np.empty(y.size - 1)
    parts[:-1:2] = h1[::2]
    parts[1::2] = h2[::2]
    parts[-1] = h2[-1]   # the last interval only from the formula for h2
    res = np.cumsum(parts) + 0.0
    return np.concatenate([[0.0], res])


@dataclass(frozen=True)
class EnergyBalance:
    """``B(t) = E(t) − E(0) − W(t)`` of one run.

    Attributes
    ----------
    work : numpy.ndarray
        ``W(t)``, shape (n_t,): the work of everything ``E`` leaves out.
    balance : numpy.ndarray
        ``B(t)``, shape (n_t,).
    max_abs : float
        ``max |B|``.
    scale : float
        ``max(max |E|, max |W|)``; 0 for a model whose energy never moved.
    quadrature : float
        Estimated error of ``W`` from its quadrature over the output times (Richardson:
        the Simpson sums over every output and over every other one differ by about 15
        times the error of the first); 0 with fewer than five outputs.
    segments : int
        Stretches between resets of the state.
    unavailable : str
        Why there is no balance (a run stopped at its first output time, a non-finite
        ``E`` or ``dE/dt``), ``""`` where there is one; then ``balance`` is NaN and
        ``max_abs``, ``scale`` are NaN.
    """

    work: np.ndarray
    balance: np.ndarray
    max_abs: float
    scale: float
    quadrature: float = 0.0
    segments: int = 1
    unavailable: str = ""

    @property
    def available(self) -> bool:
        """Whether the balance was taken (see :attr:`unavailable`)."""
        return not self.unavailable

    @property
    def relative(self) -> float | None:
        """``max |B| / scale``, or ``None`` when the scale is 0 (use :attr:`max_abs`) or
        the balance is not available."""
        return self.max_abs / self.scale if self.available and self.scale > 0 else None

    def describe(self) -> str:
        """One line: the absolute balance and, where there is a scale, the relative one;
        or why it is not available."""
        if not self.available:
            return f"not available: {self.unavailable}"
        text = f"max |E - E(0) - W| = {self.max_abs:.3g}"
        if self.relative is not None:
            text += f" (relative to max(|E|, |W|) = {self.scale:.3g}: {self.relative:.3g})"
        if self.quadrature >= 0.25 * self.max_abs > 1e-6 * self.scale:
            # a balance above 1e-6 of the energy's scale of which the quadrature's estimate
            # is a good part measures the output grid rather than the run (on a grid too
            # coarse for Simpson's asymptotics the estimate is low: hence a quarter)
            text += (f"; about {self.quadrature:.2g} of it (estimated) is the quadrature "
                     "of W over the output times: more output points (--points) sharpen "
                     "the check")
        if self.segments > 1:
            text += f", between the {self.segments - 1} resets of the state"
        return text


def quadrature_error(t: np.ndarray, power: np.ndarray) -> float:
    """Estimated ``max |error|`` of :func:`work_done` on the output times ``t``.

    Simpson's rule has an error ``O(h⁴)``: the sums over every output and over every
    other one differ by about ``(2⁴ − 1)`` times the error of the first (Richardson).
    0 where the grid is too short or not strictly increasing (events recorded twice).
    """
    t = np.asarray(t, float)
    power = np.asarray(power, float)
    if t.size < 5 or np.any(np.diff(t) <= 0):
        return 0.0
    fine = work_done(t, power)[::2]
    coarse = work_done(t[::2], power[::2])
    return float(np.max(np.abs(fine - coarse))) / 15.0


def work_done(t: np.ndarray, power: np.ndarray) -> np.ndarray:
    """``W(t) = ∫ power dt`` from ``t[0]``, shape (n_t,), by the composite Simpson rule.

    Two points: the trapezoid rule. Repeated times (an event recorded twice) add no work.
    """
    t = np.asarray(t, float)
    power = np.asarray(power, float)
    if t.size < 2:
        return np.zeros_like(t)
    if t.size == 2 or np.any(np.diff(t) <= 0):
        steps = np.diff(t) * (power[1:] + power[:-1]) / 2
        return np.concatenate([[0.0], np.cumsum(steps)])
    return cumulative_simpson(power, t)


def energy_balance(result) -> EnergyBalance | None:
    """The energy balance of ``result`` (a :class:`~kidym.simulation.result.Result`).

    Returns
    -------
    EnergyBalance or None
        ``None`` when the run recorded no ``energy`` and ``energy't`` (or no times); one
        that is not :attr:`~EnergyBalance.available` when there is no motion to balance
        or ``E``, ``dE/dt`` are not finite.
    """
    values = result.values
    if "energy" not in values or POWER not in values or not np.size(result.t):
        return None
    t = np.asarray(result.t, float)
    energy = np.asarray(values["energy"], float)
    power = np.asarray(values[POWER], float)
    reason = _unavailable(result, t, energy, power)
    if reason:
        nan = np.full_like(t, np.nan)
        return EnergyBalance(work=nan, balance=nan.copy(), max_abs=float("nan"),
                             scale=float("nan"), unavailable=reason)
    work = np.zeros_like(t)
    balance = np.zeros_like(t)
    starts = reset_starts(result)
    for a, b in zip(starts, [*starts[1:], t.size]):
        w = work_done(t[a:b], power[a:b])
        work[a:b] = w + (work[a - 1] if a else 0.0)
        balance[a:b] = energy[a:b] - energy[a] - w
    scale = float(max(np.max(np.abs(energy)), np.max(np.abs(work))))
    return EnergyBalance(work=work, balance=balance, max_abs=float(np.max(np.abs(balance))),
                         scale=scale, segments=len(starts),
                         quadrature=max(quadrature_error(t[a:b], power[a:b])
                                        for a, b in zip(starts, [*starts[1:], t.size])))


def balance_unavailable(result) -> str | None:
    """What :func:`energy_balance` checks before it integrates the work: ``None`` where
    the run records no ``energy`` and ``energy't`` (or no times), else why its balance
    cannot be taken, ``""`` where it can (the energy monitor's first question, asked of
    every run of a study)."""
    values = result.values
    if "energy" not in values or POWER not in values or not np.size(result.t):
        return None
    return _unavailable(result, np.asarray(result.t, float),
                        np.asarray(values["energy"], float), np.asarray(values[POWER], float))


def _unavailable(result, t: np.ndarray, energy: np.ndarray, power: np.ndarray) -> str:
    """Why the balance of a run cannot be taken, ``""`` where it can."""
    failure = getattr(result, "failure", None) or {}
    if t.size < 2:
        stop = float(failure.get("time", t[0])) if failure else float(t[0])
        if stop == t[0]:
            return f"the run stopped at t = {stop:g}, where it started"
        return (f"the run stopped at t = {stop:.9g}, before its second output time (no "
                "motion recorded to balance)")
    bad = ~(np.isfinite(energy) & np.isfinite(power))
    if np.any(bad):
        what = "E" if not np.isfinite(energy[bad][0]) else "dE/dt"
        return f"{what} is not finite at t = {t[bad][0]:.9g}"
    return ""


def reset_starts(result) -> list[int]:
    """Indices of the output times where a stretch without resets begins: 0, and the
    first output time at or after each event that changed the state (outputs at an
    event's time show the state after it)."""
    ev = result.stats.get("events")
    starts = [0]
    if not isinstance(ev, dict) or "state_after" not in ev or not len(ev["t"]):
        return starts
    before = np.asarray(ev["state"], float)
    after = np.asarray(ev["state_after"], float)
    changed = np.any(before != after, axis=1)
    for te in sorted(set(np.asarray(ev["t"], float)[changed])):
        k = int(np.searchsorted(result.t, te, side="left"))
        if starts[-1] < k < len(result.t):
            starts.append(k)
    return starts
