"""Monitors of a finished run with constraints: did it pass a singular position?

At a singular position of a closed loop the constraint Jacobian ``G`` (rows: the
holonomic constraints, columns: the speeds) loses rank and the mechanism's degrees of freedom
jump: branches of the motion meet there (a parallelogram four-bar whose links all lie
in line can go on as a parallelogram, an anti-parallelogram or a kite). The augmented
formulation integrates through such a position without knowing which branch is the
physical continuation, and a branch jump leaves the energy balance and the drift clean
(issue 27). So a run whose samples show a passage through a loss of rank does not end
as a success: it ends as a failure at the last sample before the passage, naming the
time, the state, the constraints and what to try. Both engines apply the same rule to
their output samples (:func:`loop_passage`).

The rule, at the output samples ``t_k`` (positions ``q_k``):

1. ``r_k = σ_ρ / σ_1`` of ``G(q_k)``, with ``ρ`` the rank of ``G`` at the start
   (redundant constraints keep their rank); ``r_k < SAMPLE_RATIO`` is a singular
   position at a sample (each threshold here at most ``RELATIVE`` times the largest
   ``r`` of the run: a badly scaled ``G`` is not singular);
2. ``D_k``: the ``ρ`` columns of ``G(q_k)`` that a column-pivoted elimination picks
   (the best-conditioned dependent block). If ``det G(q_{k+1})[:, D_k]`` has the
   other sign than ``det G(q_k)[:, D_k]``, the motion crossed a position where that
   block is singular: a passage through a loss of rank if ``r`` along the straight
   line from ``q_k`` to ``q_{k+1}`` falls below ``PASSAGE_RATIO``, or if the samples
   are too far apart to exclude one: ``min(r_k, r_{k+1})`` below the change of ``r``
   that the distance ``|q_{k+1} − q_k|`` allows (twice the largest ``|Δr| / |Δq|`` seen
   between samples of the run). Where the engine can integrate again (both do), such
   an interval is first integrated again with finer output times and the rule applied
   to those (:func:`loop_passage`, ``refine``), so coarse output times do not fail a
   regular loop. A change of the best block where ``G`` keeps its rank (the five-bar's
   re-partitions) is no failure;
3. where ``G`` loses more than one rank at once (the N-four-bar with N ≥ 2 loses N)
   the best block's determinant vanishes to an even order and need not change sign:
   so the intervals on both sides of every sample where ``r`` has a local minimum (a
   neighbour higher by more than rounding, ``DIP_FALL``) are tested as in 2. as
   well (a jump to a branch that meets this one only at the
   singular position, such as the kite branch of a parallelogram, leaves samples on
   both sides that the straight line between them does not bring close to it: the
   distance test catches it).

A failed run is checked too, up to its failure: a passage before it is the first cause,
and the samples after it are dropped. The rule looks at the samples: a passage and a
return between two samples, where the best block's determinant changes sign twice, is
not seen. Runs through singular positions should ask for output times at least as fine
as the motion (the default 501 samples resolve the tests' mechanisms).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kidym.errors import SimulationError
from kidym.simulation import faults

#: ``σ_ρ/σ_1`` below which a sample is at a singular position.
SAMPLE_RATIO = 1e-8
#: ``σ_ρ/σ_1`` below which the line between two samples passes a singular position.
PASSAGE_RATIO = 1e-3
#: Both thresholds are at most this fraction of the largest ``σ_ρ/σ_1`` of the run: a
#: badly scaled Jacobian (a floating base's translations beside the joints' short lever
#: arms: Cassie's ratio is about 7e-4 everywhere) is not a singular position
#: (``formulation="ali3"``'s bridges use the same fraction, ``passages.NEAR``).
RELATIVE = 0.05
#: A local minimum of ``r`` at a sample is a dip (rule 3) where a neighbour's ``r`` is at
#: least this factor above it: the rounding-level ups and downs of a nearly constant
#: ``r`` are no dips. (Not more: a jump to another branch at a passage between two
#: samples may leave ``r`` at the sample after it only a few per cent above the one
#: before — the spring four-bar onto the branch with its crank held at 0, 9 %.)
DIP_FALL = 1.0 + 1e-6
#: Points on the line between two samples where ``r`` is evaluated.
LINE_POINTS = 33

HINT = ("the loop passes a position where its links lie in line (a dead centre, or a "
        "bifurcation of a parallelogram or kite): there the motion can go on along more "
        "than one branch, and the augmented formulation cannot tell which one is "
        "physical. Look at the motion up to this time; to pass the position, model the "
        "loop on the branch it follows (e.g. a parallelogram by one coordinate), or stop "
        "the run before it")


@dataclass(frozen=True)
class Passage:
    """A passage through a loss of rank between samples ``k`` and ``k + 1``."""

    k: int
    t_before: float
    t_after: float
    ratio: float
    at_sample: bool

    def error(self, state_names: Sequence[str], y: np.ndarray,
              constraint_names: Sequence[str]) -> SimulationError:
        """The :class:`SimulationError` of this passage (the state at sample ``k``)."""
        names = ", ".join(f"`{n}`" for n in constraint_names)
        where = (f"at t = {self.t_before:.10g}" if self.at_sample else
                 f"between t = {self.t_before:.10g} and t = {self.t_after:.10g}")
        return SimulationError(
            f"the constraint Jacobian loses rank {where} (its smallest singular value is "
            f"{self.ratio:.2g} of its largest there; constraints {names}): the loop passes "
            "a singular position, where branches of the motion meet, and the run may have "
            "left the physical one",
            time=self.t_before, state=dict(zip(state_names, np.asarray(y, float).tolist())),
            hint=HINT, kind=faults.CONSTRAINTS)


def _loop_rows(system) -> list[int]:
    """The holonomic constraints ``Φ(q, t) = 0`` (the loops). Velocity constraints —
    rolling contact — are left out: their rows lose rank where the parametrisation of
    the contact does (a normal turning horizontal), which the engines report
    themselves."""
    cons = system.equations.constraints
    flags = cons.holonomic or (True,) * cons.m
    return [i for i, h in enumerate(flags) if h]


def _jacobian(system, t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    G = np.asarray(system.constraint_block(float(t), y, p)[2].G, float)
    return G[_loop_rows(system)]


def singular_ratio(G: np.ndarray, rank: int) -> float:
    s = np.linalg.svd(G, compute_uv=False)
    if s.size == 0 or not s[0] > 0 or not np.all(np.isfinite(s)):
        return 0.0
    return float(s[rank - 1] / s[0])


def pivot_columns(G: np.ndarray, rank: int) -> list[int]:
    """``rank`` columns of ``G`` by greedy column pivoting: at each step the column of
    largest norm orthogonal to those chosen (LAPACK's QR with column pivoting, ``geqp3``;
    a Python Gram–Schmidt loop of the same choice took 40 of the 93 s that A02 with
    N = 10 spent outside the compiled loop). A non-finite ``G`` gives the first
    ``rank`` columns (its ratio :func:`singular_ratio` is 0 there)."""
    from scipy.linalg import qr

    if rank == 0 or G.size == 0:
        return []
    if not np.all(np.isfinite(G)):
        return list(range(rank))
    return [int(j) for j in qr(G, pivoting=True, mode="r", check_finite=False)[1][:rank]]


def _signed_volume(G: np.ndarray, cols: list[int]) -> float:
    """``det G[:, cols]`` (``G`` with as many rows as its rank at the start)."""
    return float(np.linalg.det(G[:, cols]))


#: Samples of a refined interval (``refine``) and how many times an interval is refined.
REFINE_POINTS = 33
REFINE_DEPTH = 3


def loop_passage(system, t: np.ndarray, Y: np.ndarray, p: np.ndarray, *,
                 refine=None, depth: int = REFINE_DEPTH, edges: bool = False,
                 largest: float = 0.0) -> Passage | None:
    """The first passage through a singular position in a run's samples, or None.

    Where the samples of an interval cannot exclude a passage (rule 2's distance test:
    output times coarser than the motion) and ``refine`` is given, the interval is
    integrated again with :data:`REFINE_POINTS` output times and the rule applied to
    them, up to ``depth`` times; only a passage that the finest samples still show (or
    cannot exclude) fails the run, so coarse output times do not fail a regular loop.

    Parameters
    ----------
    system : NumpySystem or CompiledSystem
        Anything with ``constraint_block(t, y, p) -> (M, F, Block)`` and ``equations``.
    t : ndarray, shape (n_t,)
        The output times.
    Y : ndarray, shape (n_t, n_y)
        The states there.
    p : ndarray
        The parameter vector.
    refine : callable, optional
        ``refine(ta, tb, ya, times) -> (t, Y)``: the engine's integration from state
        ``ya`` at ``ta`` with output times ``times`` (``times[0] = ta``, up to ``tb``),
        the states in rows; it may return fewer rows (a failure).
    depth : int
        How many times an interval may still be refined.
    edges : bool
        Whether a minimum of ``r`` at the first or the last sample counts as one inside
        (rule 3): for samples that go on from a motion checked before them (the compiled
        phase of ``formulation="ali3"`` checks its windows of samples one by one, and a
        window may start just before a passage, its first sample the lowest).
    largest : float
        The largest ``σ_ρ/σ_1`` seen before these samples (of the run that a refined
        interval or a window belongs to): the thresholds are relative to it as well.

    Returns
    -------
    Passage or None
    """
    n_q = system.equations.n_q
    if len(t) == 0 or not _loop_rows(system):
        return None
    Gs = []
    for k in range(len(t)):   # up to a sample where G cannot be evaluated (a failed run's)
        try:
            G = _jacobian(system, t[k], Y[k], p)
        except (SimulationError, ValueError, ZeroDivisionError, OverflowError):
            break
        if not np.all(np.isfinite(G)):
            break
        Gs.append(G)
    t, Y = t[:len(Gs)], np.asarray(Y, float)[:len(Gs)]
    if len(Gs) == 0:
        return None   # a formula fault is the engines' own report
    s0 = np.linalg.svd(Gs[0], compute_uv=False)
    if s0.size == 0 or not s0[0] > 0:
        return None
    rank = int(np.sum(s0 > 1e-10 * s0[0]))
    if rank < Gs[0].shape[0]:
        # redundant rows: keep an independent set of them (by the start's pivoting)
        rows = pivot_columns(Gs[0].T.copy(), rank)
        Gs = [G[sorted(rows)] for G in Gs]
    r = np.array([singular_ratio(G, rank) for G in Gs])
    largest = max(largest, float(r.max()))
    sample_ratio = min(SAMPLE_RATIO, RELATIVE * largest)
    passage_ratio = min(PASSAGE_RATIO, RELATIVE * largest)
    for k in range(len(t)):
        if r[k] < sample_ratio:
            return Passage(max(k - 1, 0), float(t[max(k - 1, 0)]), float(t[k]),
                           float(r[k]), at_sample=k == 0)
    q = np.asarray(Y, float)[:, :n_q]
    dq = np.sqrt((np.diff(q, axis=0) ** 2).sum(axis=1)) if len(t) > 1 else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.abs(np.diff(r)) / dq
    slopes = slopes[np.isfinite(slopes)]
    lipschitz = 2.0 * float(slopes.max(initial=0.0))
    # a local minimum of r at a sample: where G loses more than one rank, the best
    # block's determinant vanishes to an even order and need not change sign
    dips = {j for k in range(1, len(t) - 1) if r[k] <= r[k - 1] and r[k] <= r[k + 1]
            and max(r[k - 1], r[k + 1]) >= DIP_FALL * r[k] for j in (k - 1, k)}
    if edges and len(t) > 1:
        if DIP_FALL * r[0] <= r[1]:
            dips.add(0)
        if DIP_FALL * r[-1] <= r[-2]:
            dips.add(len(t) - 2)
    for k in range(len(t) - 1):
        cols = pivot_columns(Gs[k], rank)
        flipped = _signed_volume(Gs[k], cols) * _signed_volume(Gs[k + 1], cols) <= 0
        if not flipped and k not in dips:
            continue
        low = _line_minimum(system, t[k], t[k + 1], Y[k], Y[k + 1], p, rank)
        if low < passage_ratio or min(r[k], r[k + 1]) < lipschitz * dq[k]:
            if refine is not None and depth > 0:
                fine = _refined(system, refine, t[k], t[k + 1], Y[k], p, depth, largest)
                if fine is None:
                    continue   # the finer samples show no passage in this interval
                low = min(low, fine.ratio)
            return Passage(k, float(t[k]), float(t[k + 1]), float(min(low, r[k], r[k + 1])),
                           at_sample=False)
    return None


def _refined(system, refine, ta: float, tb: float, ya: np.ndarray, p: np.ndarray,
             depth: int, largest: float) -> Passage | None:
    """The rule on the interval ``[ta, tb]`` integrated again with finer output times;
    a sub-run that ends early counts as a passage not excluded."""
    times = np.linspace(ta, tb, REFINE_POINTS)
    try:
        ts, Ys = refine(ta, tb, np.asarray(ya, float), times)
    except (SimulationError, ValueError, ArithmeticError):
        ts, Ys = np.empty(0), np.empty((0, len(ya)))
    if len(ts) < len(times):
        return Passage(0, float(ta), float(tb), 0.0, at_sample=False)
    return loop_passage(system, np.asarray(ts, float), np.asarray(Ys, float), p,
                        refine=refine, depth=depth - 1, largest=largest)


def _line_minimum(system, ta: float, tb: float, ya: np.ndarray, yb: np.ndarray,
                  p: np.ndarray, rank: int) -> float:
    """The smallest ``σ_ρ/σ_1`` of ``G`` on the straight line between two states."""
    low = np.inf
    for s in np.linspace(0.0, 1.0, LINE_POINTS):
        G = _jacobian(system, ta + s * (tb - ta), ya + s * (yb - ya), p)
        if np.all(np.isfinite(G)):
            low = min(low, singular_ratio(G, rank))
    return float(low)


#: What a singular augmented solve means where the mass matrix is regular.
RANK_LOSS = ("the constraint Jacobian has lost rank (G M⁻¹ Gᵀ is singular; the mass matrix "
             "is regular): the constraints are dependent here, or the loop is at a singular "
             "(dead-centre or locking) position")
#: What to try where a solve finds the constraints dependent: a loop, or a rolling
#: contact whose rows lose rank where its surface's parametrisation does.
RANK_LOSS_HINT = ("a loop whose links come into line (a dead centre, or a bifurcation of a "
                  "parallelogram or kite), or a rolling contact where the constraint "
                  "cannot hold as written (a ball at a sphere's equator, its normal "
                  "horizontal): end the run before it (t_end), or model the motion there "
                  "otherwise (a loop on the branch it follows, by one coordinate)")


def augmented_fault(fault: faults.Fault, M: np.ndarray) -> faults.Fault:
    """``fault`` (a singular augmented solve of the compiled engine, which reports it as
    a singular mass matrix) named for what is singular: the constraint Jacobian where
    ``M`` is regular (positive definite, condition below 1e12), else unchanged."""
    M = np.asarray(M, float)
    if not np.all(np.isfinite(M)):
        return fault
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        return fault
    if np.linalg.cond(M) > 1e12:
        return fault
    return faults.Fault(faults.CONSTRAINTS, RANK_LOSS, fault.t, fault.y, RANK_LOSS_HINT)
