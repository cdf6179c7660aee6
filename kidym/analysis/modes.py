"""Free vibrations and stability (``РАСЧЕТ := СВОБОДНЫЕ КОЛЕБАНИЯ``), and continuation.

The eigenvalues ``s`` of ``A`` (:func:`kidym.analysis.linearize.linearize`) about an
equilibrium (found first by :func:`kidym.analysis.statics.equilibrium` when every
speed of the operating point is zero) or a steady motion given by the user (the
disc's spin). States that do not couple back — a zero column of ``A`` (a cyclic
coordinate: nothing depends on it) or a zero row (a state that nothing changes) — are
split off first: each gives an exact eigenvalue 0 and is left out of the verdict, so
that Jordan chains of cyclic coordinates do not show up as spurious ``±1e-8`` real parts.

For each pair ``s = −ζω ± iω√(1−ζ²)``: natural frequency ``ω = |s|``, damped frequency
``Im s``, damping ratio ``ζ = −Re s/|s|``; the mode shape is the eigenvector's
coordinate part, scaled so that its largest component is 1. Stability of the linear
system: every other eigenvalue with ``Re s < −tol`` — asymptotically stable; one with
``Re s > tol`` — unstable; else marginal (the linear terms do not decide).
``tol = 1e-8·max(1, ‖A‖)``.

Continuation varies a parameter or a state value of the operating point over a grid,
linearising at each value (re-solving the equilibrium where it is one, warm-started);
the stability boundaries are the roots of ``max Re s − tol`` between grid points where
it changes sign (Brent's method).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from kidym.analysis.consistent import solved_text
from kidym.analysis.derivatives import StateDerivatives
from kidym.analysis.linearize import Linearization, linearize
from kidym.analysis.statics import Equilibrium, equilibrium
from kidym.deprecation import renamed_keyword
from kidym.eom.equations import Equations
from kidym.errors import Diagnostic, ModelError


@dataclass(frozen=True)
class Mode:
    """One eigenvalue (of a complex pair, the one with ``Im s > 0``) and its shape."""

    eigenvalue: complex
    frequency: float          # ω = |s| [rad/s] (0 for a real eigenvalue: see `eigenvalue`)
    damped_frequency: float   # Im s [rad/s]
    damping_ratio: float      # −Re s / |s|
    shape: dict[str, complex]  # coordinate part of the eigenvector, largest component 1

    @property
    def oscillatory(self) -> bool:
        """Whether it is a complex pair (a vibration)."""
        return self.damped_frequency > 0

    @property
    def period(self) -> float:
        """``2π / Im s`` [s] (inf for a real eigenvalue)."""
        return 2 * np.pi / self.damped_frequency if self.oscillatory else float("inf")


@dataclass(frozen=True)
class Modes:
    """Result of :func:`modes`."""

    linearization: Linearization
    eigenvalues: np.ndarray            # of the coupled part of A, sorted
    modes: tuple[Mode, ...]
    decoupled: tuple[str, ...]         # states split off with eigenvalue 0
    stability: str                     # "asymptotically stable" | "unstable" | "marginal"
    max_real: float
    tolerance: float
    equilibrium: Equilibrium | None = None

    def __repr__(self) -> str:
        freqs = ", ".join(f"{m.frequency:.4g}" for m in self.modes[:6])
        more = ", …" if len(self.modes) > 6 else ""
        return (f"Modes({len(self.modes)} modes, frequencies [{freqs}{more}] rad/s, "
                f"stability={self.stability!r}, max_real={self.max_real:.3g})")

    def _repr_html_(self) -> str:
        """Jupyter: the table of modes and the verdict (:meth:`describe`)."""
        from kidym.display import summary

        return summary("kidym Modes", [("stability", self.stability),
                                       ("modes", str(len(self.modes)))],
                       text=self.describe())

    def describe(self) -> str:
        """The table of modes and the verdict, for the terminal."""
        lines = []
        if self.linearization.solved:
            lines.append(solved_text(self.linearization.solved))
        if self.equilibrium is not None:
            lines.append(self.equilibrium.describe())
        elif not self.linearization.stationary:
            lines.append("note: ẇ ≠ 0 at this state; the eigenvalues describe this instant "
                         "only (not an equilibrium or a steady motion)")
        if self.decoupled:
            lines.append("eigenvalue 0 (states that do not couple back): "
                         + ", ".join(self.decoupled))
        lines.append(f"{'mode':>4} {'Re s [1/s]':>13} {'Im s [rad/s]':>13} "
                     f"{'ω [rad/s]':>11} {'f [Hz]':>10} {'ζ':>9}  shape")
        tol = self.tolerance
        for k, md in enumerate(self.modes, 1):
            s = md.eigenvalue
            shape = ", ".join(f"{n} {_c(v)}" for n, v in md.shape.items() if abs(v) > 1e-9)
            zeta = _zero(md.damping_ratio, 1e-9)
            lines.append(f"{k:>4} {_zero(s.real, tol):13.6g} {_zero(s.imag, tol):13.6g} "
                         f"{md.frequency:11.6g} {md.frequency / (2 * np.pi):10.6g} "
                         f"{zeta:9.4g}  {shape}")
        lines.append(f"stability (linear): {self.stability} (max Re s = "
                     f"{_zero(self.max_real, tol):.3g}, tolerance {tol:.2g})")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"eigenvalues": [[s.real, s.imag] for s in self.eigenvalues],
                "modes": [{"eigenvalue": [m.eigenvalue.real, m.eigenvalue.imag],
                           "frequency": m.frequency, "damped_frequency": m.damped_frequency,
                           "damping_ratio": m.damping_ratio,
                           "shape": {k: [v.real, v.imag] for k, v in m.shape.items()}}
                          for m in self.modes],
                "decoupled": list(self.decoupled), "stability": self.stability,
                "max_real": self.max_real, "tolerance": self.tolerance,
                "linearization": self.linearization.to_dict(),
                "equilibrium": self.equilibrium.to_dict() if self.equilibrium else None}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)


def _zero(x: float, tol: float) -> float:
    """``x``, or 0 where it is within ``tol`` of 0 (rounding noise is not printed)."""
    return 0.0 if abs(x) <= tol else float(x)


def _c(v: complex) -> str:
    if abs(v.imag) <= 1e-9 * max(1.0, abs(v)):
        return f"{v.real:.4g}"
    return f"({v.real:.4g}{v.imag:+.4g}i)"


def coupled_part(A: np.ndarray) -> tuple[list[int], list[int]]:
    """``(kept, dropped)`` state indices: states with a zero row or column in what is
    left of ``A`` are dropped, repeatedly (each is an exact eigenvalue 0)."""
    kept = list(range(A.shape[0]))
    scale = max(1.0, float(np.abs(A).max(initial=0.0)))
    tiny = 1e-13 * scale
    changed = True
    dropped: list[int] = []
    while changed and kept:
        changed = False
        sub = np.abs(A[np.ix_(kept, kept)])
        for pos in range(len(kept)):
            if sub[pos, :].max() <= tiny or sub[:, pos].max() <= tiny:
                dropped.append(kept.pop(pos))
                changed = True
                break
    return kept, dropped


def _spectrum(lin: Linearization):
    from scipy import linalg
    A = lin.A
    kept, dropped = coupled_part(A)
    ev = linalg.eigvals(A[np.ix_(kept, kept)]) if kept else np.zeros(0, complex)
    tol = 1e-8 * max(1.0, float(np.abs(A).max(initial=0.0)))
    # by decreasing real part, real parts within the tolerance taken as equal (an
    # undamped system's ±1e-17 must not decide the order), then by the imaginary part
    real = np.where(np.abs(ev.real) <= tol, 0.0, ev.real)
    order = np.lexsort((ev.imag, -real))
    ev = ev[order]
    max_real = float(ev.real.max()) if ev.size else 0.0
    return ev, kept, dropped, tol, max_real


def _verdict(ev: np.ndarray, tol: float) -> str:
    if not ev.size:
        return "marginal"
    if ev.real.max() > tol:
        return "unstable"
    if ev.real.max() < -tol:
        return "asymptotically stable"
    return "marginal"


def _modes(lin: Linearization, ev: np.ndarray, tol: float,
           coordinates: set[str]) -> tuple[Mode, ...]:
    """One :class:`Mode` per real eigenvalue and per pair (``Im s > 0``); shapes from the
    full ``A`` (its null vector at ``s``)."""
    A = lin.A
    n = A.shape[0]
    coords = [i for i, s in enumerate(lin.states) if s in coordinates]
    out = []
    for s in ev:
        if s.imag < -tol:
            continue
        if abs(s) <= tol:
            continue            # neutral: no vibration, no shape worth showing
        _u, _sv, vh = np.linalg.svd(A - s * np.eye(n))
        v = vh[-1].conj()
        c = v[coords] if coords else v
        k = int(np.argmax(np.abs(c)))
        c = c / c[k] if abs(c[k]) > 0 else c
        r = abs(s)
        out.append(Mode(eigenvalue=complex(s), frequency=float(r),
                        damped_frequency=float(max(s.imag, 0.0)) if s.imag > tol else 0.0,
                        damping_ratio=float(-s.real / r),
                        shape={lin.states[i]: complex(x) for i, x in zip(coords, c)}))
    return tuple(out)


@renamed_keyword("params", "parameters")
def modes(equations: Equations, state: Mapping[str, float] | None = None, *,
          parameters: Mapping[str, float] | None = None, t: float | None = None,
          statics: bool | None = None,
          derivatives: StateDerivatives | None = None,
          guess: Mapping[str, float] | None = None) -> Modes:
    """Eigenvalues, frequencies, damping ratios and mode shapes about a state.

    Parameters
    ----------
    equations : Equations
    state : mapping of str to float, optional
        The operating point (default: the model's initial values).
    parameters : mapping of str to float, optional
        Parameter values (overrides); ``params=`` is its old name (deprecated).
    t : float, optional
    statics : bool, optional
        Solve the equilibrium first (default: when every speed of the point is zero).
    derivatives : StateDerivatives, optional
        Reuse formed derivatives.
    guess : mapping of str to float, optional
        Values of states not given, as for :func:`~kidym.analysis.linearize.linearize`
        (without statics).

    Returns
    -------
    Modes

    Examples
    --------
    >>> import kidym
    >>> eq = kidym.derive(kidym.parse('''
    ...     m = 1; l = 2; g = 9.81;
    ...     Bob | Rz(phi) | Sx(l), m, 0, 0, 0;
    ...     GRAVITY := 0, -g, 0;
    ...     INITIAL := t(0), phi(-1.4);
    ... '''))
    >>> md = kidym.modes(eq)                 # statics first: φ = −π/2
    >>> round(md.modes[0].frequency ** 2, 6)   # g / l
    4.905
    """
    eq = equations
    der = derivatives if derivatives is not None else StateDerivatives.build(eq)
    speeds = [str(s) for s in eq.speeds]
    if statics is None:
        from kidym.analysis.linearize import operating_point

        _t, y, _p = operating_point(eq, state, parameters, t)
        statics = not np.any(y[eq.n_q:])
    eqm = None
    point = dict(state or {})
    if statics:
        eqm = equilibrium(eq, state=point, parameters=parameters, t=t, derivatives=der)
        # the equilibrium is on the constraints to its own tolerance: its coordinates
        # are a guess that the constraints may polish, not given states
        lin0 = linearize(eq, None, parameters=parameters, t=t, derivatives=der,
                         guess={**point, **eqm.coordinates, **{w: 0.0 for w in speeds}})
        return _result(lin0, eqm, eq)
    lin0 = linearize(eq, point, parameters=parameters, t=t, derivatives=der, guess=guess)
    return _result(lin0, eqm, eq)


def _result(lin: Linearization, eqm: Equilibrium | None, eq: Equations) -> Modes:
    ev, _kept, dropped, tol, max_real = _spectrum(lin)
    coordinates = {str(q) for q in eq.coordinates}
    return Modes(linearization=lin, eigenvalues=ev, modes=_modes(lin, ev, tol, coordinates),
                 decoupled=tuple(lin.states[i] for i in dropped),
                 stability=_verdict(ev, tol), max_real=max_real, tolerance=tol,
                 equilibrium=eqm)


def mode_vector(md: Modes, k: int) -> dict[str, complex]:
    """The whole eigenvector of mode ``k`` (1-based, as :meth:`Modes.describe` numbers
    them) over every state ``q, w`` by name — the independent states ``x`` and the
    dependent ones ``D x`` — scaled as :attr:`Mode.shape` (its largest coordinate 1).

    Raises
    ------
    ValueError
        ``k`` out of range.
    """
    if not 1 <= k <= len(md.modes):
        raise ValueError(f"there is no mode {k}: the modes are 1 … {len(md.modes)}"
                         if md.modes else "there are no modes (every eigenvalue is 0)")
    lin = md.linearization
    mode = md.modes[k - 1]
    n = lin.A.shape[0]
    _u, _sv, vh = np.linalg.svd(lin.A - mode.eigenvalue * np.eye(n))
    v = vh[-1].conj()
    # the same scaling as Mode.shape: its largest coordinate component 1
    ref = max(mode.shape, key=lambda name: abs(mode.shape[name]))
    i = lin.states.index(ref)
    v = v / v[i] * mode.shape[ref]
    out = {name: complex(x) for name, x in zip(lin.states, v)}
    if lin.dependent:
        out.update({name: complex(x) for name, x in zip(lin.dependent, lin.D @ v)})
    return out


def mode_motion(md: Modes, k: int, amplitude: float, *,
                n_points: int = 61) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One period of mode ``k`` as a motion: ``y(τ) = y₀ + ε Re(v e^{iωτ})``.

    Parameters
    ----------
    md : Modes
    k : int
        The mode, 1-based.
    amplitude : float
        ``ε``: the largest coordinate of the shape moves by ``ε``.
    n_points : int
        Times over one period ``2π/ω`` (``ω`` the damped frequency ``Im s``; the
        damping is left out, so the shape repeats).

    Returns
    -------
    tau : ndarray, shape (n_points,)
    states : dict of str to ndarray
        Every state by name, each by the same formula (its component of ``v``).

    Raises
    ------
    ValueError
        ``k`` out of range, or mode ``k`` not a vibration (a real eigenvalue).
    """
    v = mode_vector(md, k)
    mode = md.modes[k - 1]
    if not mode.oscillatory:
        raise ValueError(f"mode {k} is not a vibration (s = {mode.eigenvalue.real:.6g}, a "
                         "real eigenvalue): it grows or decays without oscillating, so it "
                         "has no period to animate")
    w = mode.damped_frequency
    tau = np.linspace(0.0, 2 * np.pi / w, n_points)
    phase = np.exp(1j * w * tau)
    point = md.linearization.point
    return tau, {name: point[name] + amplitude * np.real(v.get(name, 0.0) * phase)
                 for name in point}


@dataclass(frozen=True)
class Continuation:
    """Eigenvalues along a parameter (:func:`continuation`).

    Attributes
    ----------
    name : str
        The parameter or state varied.
    values : ndarray, shape (n,)
    eigenvalues : ndarray, shape (n, k)
        Of the coupled part at each value, sorted by decreasing real part (NaN-padded
        where there are fewer).
    max_real : ndarray, shape (n,)
    boundaries : tuple of float
        Values where ``max Re s`` crosses the tolerance (stability changes).
    stability : tuple of str
        The verdict at each value.
    """

    name: str
    values: np.ndarray
    eigenvalues: np.ndarray
    max_real: np.ndarray
    boundaries: tuple[float, ...]
    stability: tuple[str, ...]
    tolerance: float
    extra: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"Continuation({self.name!r}, {self.values.size} values "
                f"{self.values[0]:g}…{self.values[-1]:g}, boundaries="
                f"{[float(f'{b:.6g}') for b in self.boundaries]})")

    def _repr_html_(self) -> str:
        """Jupyter: the ranges of stability and the boundaries (:meth:`describe`)."""
        from kidym.display import summary

        return summary(f"kidym Continuation along {self.name}", [], text=self.describe())

    def describe(self) -> str:
        """Ranges of stability and the boundaries."""
        lines = [f"eigenvalues along {self.name} = {self.values[0]:g} … {self.values[-1]:g} "
                 f"({self.values.size} values)"]
        start = 0
        for i in range(1, self.values.size + 1):
            if i == self.values.size or self.stability[i] != self.stability[start]:
                lines.append(f"  {self.values[start]:g} … {self.values[i - 1]:g}: "
                             f"{self.stability[start]}")
                start = i
        if self.boundaries:
            lines.append("stability boundaries: " + ", ".join(
                f"{self.name} = {b:.10g}" for b in self.boundaries))
        else:
            lines.append("stability boundaries: none in this range")
        return "\n".join(lines)

    def write_csv(self, path: str | Path) -> Path:
        """``value, max_real, Re s1, Im s1, …`` one row per value."""
        path = Path(path)
        k = self.eigenvalues.shape[1]
        head = [self.name, "max_real"] + [f"{p}{j + 1}" for j in range(k)
                                          for p in ("re", "im")]
        rows = [",".join(head)]
        for v, mr, ev in zip(self.values, self.max_real, self.eigenvalues):
            cells = [repr(float(v)), repr(float(mr))]
            for s in ev:
                cells += [repr(float(s.real)), repr(float(s.imag))]
            rows.append(",".join(cells))
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        return path

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"name": self.name, "values": self.values.tolist(),
                "max_real": self.max_real.tolist(), "boundaries": list(self.boundaries),
                "stability": list(self.stability), "tolerance": self.tolerance}

    def plot(self, path: str | Path) -> Path:
        """Real and imaginary parts of the eigenvalues against the parameter (PNG)."""
        from matplotlib.figure import Figure  # (no pyplot: the session's backend is kept)

        path = Path(path)
        fig = Figure(figsize=(7, 6))
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        ev = self.eigenvalues
        for j in range(ev.shape[1]):
            ax1.plot(self.values, ev[:, j].real, ".", ms=3, color="C0")
            ax2.plot(self.values, ev[:, j].imag, ".", ms=3, color="C1")
        for b in self.boundaries:
            for ax in (ax1, ax2):
                ax.axvline(b, color="k", ls="--", lw=0.8)
        ax1.axhline(0, color="0.5", lw=0.5)
        ax1.set_ylabel("Re s [1/s]")
        ax2.set_ylabel("Im s [rad/s]")
        ax2.set_xlabel(self.name)
        ax1.set_title("eigenvalues along " + self.name
                      + ("; boundaries " + ", ".join(f"{b:.5g}" for b in self.boundaries)
                         if self.boundaries else ""))
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        return path


#: Most principal minors summed for a divergence boundary's indicator.
MAX_MINORS = 20000


def _locate(left: Modes, right: Modes, lo: float, hi: float, at, tol: float) -> float:
    """The stability boundary between ``lo`` and ``hi``, by Brent's method on a function
    that is smooth through it.

    * a complex pair crossing the imaginary axis (flutter, Hopf): its real part, the
      largest real part among the eigenvalues with ``Im s ≠ 0``;
    * a real eigenvalue crossing zero (divergence, as the disc's lean): the eigenvalues
      themselves are poor there — with neutral eigenvalues beside it (a conserved
      quantity) three of them meet at 0 and come out with errors near ``ε^(1/3)`` — so the
      product of the nonzero eigenvalues is taken instead, as the sum of the principal
      minors of order ``n − k₀`` of the coupled ``A`` (``k₀`` eigenvalues stay 0 along the
      branch), which is a polynomial in the entries of ``A``.
    """
    from scipy import optimize
    unstable = left if left.max_real > right.max_real else right
    top = unstable.eigenvalues[int(np.argmax(unstable.eigenvalues.real))]
    xtol = 1e-13 * max(1.0, abs(hi))
    if abs(top.imag) > tol:
        def pair(v: float) -> float:
            ev = at(v).eigenvalues
            ev = ev[np.abs(ev.imag) > tol]
            return float(ev.real.max()) if ev.size else -tol
        ends = pair(lo), pair(hi)
        # a pair crossing the axis (Hopf) changes sign; pairs that meet on the axis and
        # split off it (a gyroscopic system, the sleeping top) have real parts ±μ, μ ≥ 0,
        # and a marginal side at 0 within rounding: the boundary is where μ reaches tol
        # (μ grows as a square root there, so the offset moves it by ~tol²)
        crosses = min(ends) < -tol and max(ends) > tol
        offset = 0.0 if crosses else tol
        return optimize.brentq(lambda v: pair(v) - offset, lo, hi, xtol=xtol, rtol=1e-15)
    k0 = min(int((np.abs(m.eigenvalues) <= tol).sum()) for m in (left, right))
    A = left.linearization.A
    kept, _ = coupled_part(A)
    n = len(kept)
    from math import comb

    if comb(n, n - k0) > MAX_MINORS:
        return optimize.brentq(lambda v: at(v).max_real - tol, lo, hi, xtol=xtol)

    def product(v: float) -> float:
        Av = at(v).linearization.A
        kv, _ = coupled_part(Av)
        Ac = Av[np.ix_(kv, kv)]
        return float(sum(np.linalg.det(Ac[np.ix_(c, c)])
                         for c in combinations(range(len(kv)), len(kv) - k0)))
    return optimize.brentq(product, lo, hi, xtol=xtol, rtol=1e-15)


def _at_value(at, name: str, v: float) -> Modes:
    """``at(v)``, a failure naming the value of the continuation it happened at."""
    try:
        return at(v)
    except ModelError as exc:
        raise ModelError([Diagnostic(f"continuation at {name} = {v:g}: {d.message}", d.span,
                                     d.severity) for d in exc.diagnostics],
                         filename=exc.filename, source=exc.source) from None
    except ValueError as exc:         # (numpy's LinAlgError is one)
        raise ValueError(f"continuation at {name} = {v:g}: {exc}") from exc


def _boundary(left: Modes, right: Modes, lo: float, hi: float, at, tol: float,
              name: str) -> float:
    """The boundary between ``lo`` and ``hi`` (where the verdict changes): by
    :func:`_locate`, or where its smooth indicator does not change sign there (two
    eigenvalues crossing at once, a pair meeting the real axis), by bisection of
    ``max Re s − tol``, which changes sign between them by construction."""
    try:
        return _locate(left, right, lo, hi, at, tol)
    except (ValueError, RuntimeError):    # (numpy's LinAlgError is a ValueError)
        pass
    f_lo = left.max_real - tol
    a, b = lo, hi
    xtol = 1e-13 * max(1.0, abs(hi))
    try:
        for _ in range(200):
            if b - a <= xtol:
                break
            mid = 0.5 * (a + b)
            f = at(mid).max_real - tol
            if f == 0:
                return mid
            if np.sign(f) == np.sign(f_lo):
                a, f_lo = mid, f
            else:
                b = mid
    except ValueError as exc:
        raise ValueError(
            f"continuation along {name}: the stability changes between {name} = {lo:g} "
            f"and {hi:g}, but the boundary could not be located: at {name} = {mid:.10g} "
            f"{exc}; use a finer grid there, or leave the boundaries unlocated "
            "(locate=False: the midpoints are reported)") from None
    return 0.5 * (a + b)


@renamed_keyword("params", "parameters")
def continuation(equations: Equations, name: str, values: Sequence[float], *,
                 state: Mapping[str, float] | None = None,
                 parameters: Mapping[str, float] | None = None, t: float | None = None,
                 statics: bool | None = None, locate: bool = True) -> Continuation:
    """Eigenvalues along a parameter or a state value, and the stability boundaries.

    Parameters
    ----------
    equations : Equations
    name : str
        A parameter of the model, or a state of the operating point (``"phi't"``, the
        disc's spin).
    values : sequence of float
        The grid, increasing.
    state, parameters, t, statics
        As for :func:`modes` (``statics`` decided at the first value).
    locate : bool
        Locate the boundaries between grid points by Brent's method.

    Returns
    -------
    Continuation
    """
    eq = equations
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2 or np.any(np.diff(values) <= 0):
        raise ValueError("continuation needs at least two increasing values")
    parameters = dict(parameters or {})
    pnames = [p.name for p in eq.model.parameters]
    snames = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    if name not in pnames and name not in snames:
        raise KeyError(f"`{name}` is neither a parameter nor a state of model "
                       f"`{eq.model.name}`; parameters: {', '.join(pnames) or '(none)'}; "
                       f"states: {', '.join(snames)}")
    der = StateDerivatives.build(eq)
    point = dict(state or {})

    guess: dict[str, float] = {}

    def at(v: float) -> Modes:
        pr, st = dict(parameters), dict(point)
        (pr if name in pnames else st)[name] = float(v)
        md = modes(eq, st, parameters=pr, t=t, statics=statics, derivatives=der,
                   guess=guess)
        if md.equilibrium is not None:   # warm start the next equilibrium
            point.update(md.equilibrium.coordinates)
        elif md.linearization.solved:    # and the next solve of the dependent states
            guess.update(md.linearization.point)
        return md

    results = [_at_value(at, name, v) for v in values]
    k = max(r.eigenvalues.size for r in results)
    ev = np.full((values.size, k), np.nan + 0j)
    for i, r in enumerate(results):
        ev[i, :r.eigenvalues.size] = r.eigenvalues
    max_real = np.array([r.max_real for r in results])
    tol = max(r.tolerance for r in results)
    boundaries = []
    f = max_real - tol
    for i in range(values.size - 1):
        if np.sign(f[i]) != np.sign(f[i + 1]) and f[i] != 0 and f[i + 1] != 0:
            lo, hi = values[i], values[i + 1]
            b = (_boundary(results[i], results[i + 1], lo, hi, at, tol, name) if locate
                 else 0.5 * (lo + hi))
            boundaries.append(float(b))
    return Continuation(name=name, values=values, eigenvalues=ev, max_real=max_real,
                        boundaries=tuple(boundaries),
                        stability=tuple(r.stability for r in results), tolerance=tol)
