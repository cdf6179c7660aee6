"""First integrals found automatically: energy, cyclic momenta, Jacobi, linear integrals.

A first integral is a function ``I(q, w, t)`` whose rate along the motion,

    ``İ = ∂I/∂t + ∂I/∂q · q̇ + ∂I/∂w · ẇ``,   ``q̇ = B w + β``,   ``M ẇ = F``,

is zero for *every* state. kidym looks for them in a finite **dictionary of
candidates**, each a named quantity of the equations (no expansion):

* ``E = T + Π``, the energy (an integral of a conservative model: no non-potential
  element, no explicit time);
* the Jacobi integral ``h = Σ q̇ ∂L/∂q̇ − L``, ``L = T − Π`` (models in generalized
  coordinates, ``w = q̇``; it is the integral of a rheonomic model whose Lagrangian has no
  explicit time, and equals ``E`` for a scleronomic one);
* the generalized momenta ``p_k = ∂T/∂w_k`` (the momentum of a cyclic coordinate:
  ``q_k`` absent from ``T`` and ``Π``, no force along it);
* linear forms of the speeds: each speed ``w_k``, each body's angular-velocity
  projections ``ωX, ωY, ωZ`` on its axes and on the fixed axes (``S·ω``), the
  projection of ``ω`` on the mass-centre radius ``ω·r_C`` (both readings of ``ω``),
  and the velocity of the mass centre.

The search is linear algebra on a **numeric witness**: the rates ``İ_k`` (named
quantities, ``ẇ`` from ``M⁻¹F``) are evaluated at random states (coordinates about the
model's initial values, quaternions normalised, random speeds, random times in the
model's range); an integral with *constant* coefficients ``Σ c_k I_k`` is a null vector
of the matrix ``R[sample, k] = İ_k``. Each column is scaled by the size of the terms
its rate sums (``Σ |∂I/∂y_i ẏ_i|`` from central differences), so that an identically
zero rate shows as rounding (``~1e-15``) and a small but real one does not. A
candidate whose own column vanishes is reported under its kind (energy, Jacobi,
momentum, a speed); the rest of the null space — the integrals that are combinations,
such as the ball's ``ω·n`` in a spherical bowl — is reported in reduced row-echelon
form. An integral whose values are a combination of those already found (``h = E`` of
a scleronomic model) is not repeated.

**Time dependence that is not smooth** (a condition, ``abs``, ``sign``, ``min``/``max``,
``floor``/``ceil`` of a formula of time alone): the derivative of such a formula holds
on each side of its switch and leaves the jump out, so a candidate may have a zero
rate at every state and still change there (``E − h = m ξ̇²`` of a prescribed length
whose rate jumps). The switches' instants in the time span are found
(:func:`kidym.analysis.integral_switches.time_breakpoints`), one random sample is drawn
in each piece between them, and an integral whose value jumps at one of them is
rejected (:func:`kidym.analysis.integral_switches.continuous_integrals`).

Then the energy, the Jacobi integral and the momenta are **proved symbolically** where
the time budget allows, without inverting ``M``: with ``y`` such that
``M y = (∂I/∂w)ᵀ`` (``y = w`` for ``E`` and ``h``, ``y = e_k`` for ``p_k``, since
``T = ½ wᵀ M w``; checked as an identity), ``İ = İ|_{ẇ=0} + yᵀ F``, and both identities
are expanded to zero (trigonometric functions rewritten as exponentials) in a child
process. ``proof`` says ``"symbolic"`` or ``"numeric"`` (a zero rate at every sample,
no finished proof: always so for combinations, whose ``y = M⁻¹ (∂I/∂w)ᵀ`` is not
formed). Coefficients of combinations are numbers, valid for the
parameter values used (``parameters``).

**Models with constraints** (``УРАВНЕНИЯ``, ``КАЧЕНИЕ``, ``СОВПАДЕНИЕ``): an integral need only be
constant along motions that satisfy them, so the random states are drawn *on* the
constraint manifold — random coordinates projected onto ``Φ(q, t) = 0`` by Newton's
method (least-norm steps ``Δq = B δ``, :func:`kidym.simulation.constrained.project`),
random speeds projected onto ``G w + g = 0`` — and the rates use the constrained
accelerations, ``ẇ`` of the augmented system ``M ẇ = F + Gᵀλ``, ``G ẇ = γ``. States
where the projection does not converge, or ``G M⁻¹ Gᵀ`` is singular, are not used. A
candidate whose values on the manifold are a combination of others' (a speed the
constraints fix, the velocity of a closing hinge read from either side) is left out
before the null space is taken. The symbolic proof also needs the reactions to do no
work on the integral: ``yᵀGᵀλ = λᵀ(G y)`` vanishes on the manifold when ``g = 0``
(``y = w``: scleronomic constraints, ``G w = c = 0``) or ``G e_k = 0`` (``y = e_k``: the
speed enters no constraint); both identities are added to the proof, so a constrained
integral whose proof would need ``c = 0`` itself is reported as ``numeric``.

Examples
--------
>>> from kidym.lang import parse
>>> m = parse("m=1; l=1; g=9.81; Bob | Sx(l*sin(phi)), Sy(-l*cos(phi)) | m; "
...           "Pg.YCBob = -m*g; phi(0.5);")
>>> found = first_integrals(m)
>>> [i.kind for i in found]
['energy']
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from kidym.analysis.integral_switches import continuous_integrals, piece_times, time_breakpoints
from kidym.analysis.integral_witness import (
    Candidate,
    FirstIntegral,
    integral_name,
    model_parameters,
    select,
    witness,
)
from kidym.eom.equations import Equations, derive
from kidym.kinematics import names as gen
from kidym.model.model import Model

Expr = se.Basic

#: Kinds of first integrals, in the order candidates are tried.
KINDS = ("energy", "jacobi", "cyclic momentum", "momentum", "speed", "linear")

#: Models with more independent speeds are not searched by default.
MAX_SPEEDS = 8

#: Models whose candidates, rates and equations written out as the evaluated code would be
#: exceed this many operations are not searched: evaluating them at every random state
#: costs minutes and gigabytes (a force nesting ``sin`` 100 deep writes out to a million).
#: The shipped examples stay below 11 000.
MAX_OPERATIONS = 200_000


@dataclass(frozen=True)
class FirstIntegrals:
    """The first integrals of a model and the equations they are expressed in.

    Attributes
    ----------
    integrals : tuple of FirstIntegral
    equations : Equations
        Equations of the model with the candidates' named quantities (same
        coordinates, speeds and parameters as ``derive(model)``).
    samples : int
        Random states the rates were evaluated at.
    candidates : tuple of str
        Labels of the dictionary searched.
    skipped : str
        Why nothing was searched (empty when searched).
    breakpoints : tuple of float
        Instants in the model's time span where its time dependence is not smooth (a
        condition, ``abs``, ``sign``, ``min``/``max``, ``floor``/``ceil`` of a formula of
        time alone changes branch).
    rejected : tuple of str
        Candidates with a zero rate at every random state that are nevertheless no
        integrals: their value jumps at a breakpoint (a jump of a prescribed rate).
    """

    integrals: tuple[FirstIntegral, ...]
    equations: Equations | None
    samples: int = 0
    candidates: tuple[str, ...] = ()
    skipped: str = ""
    dictionary: Mapping[str, Expr] = field(default_factory=dict)
    breakpoints: tuple[float, ...] = ()
    rejected: tuple[str, ...] = ()

    def __iter__(self):
        return iter(self.integrals)

    def __len__(self) -> int:
        return len(self.integrals)

    def __getitem__(self, k: int) -> FirstIntegral:
        return self.integrals[k]

    def lines(self) -> list[str]:
        """What ``kidym check`` prints."""
        if self.skipped:
            return [f"  first integrals: not searched ({self.skipped})"]
        rejected = [f"    not an integral: {r}" for r in self.rejected]
        if not self.integrals:
            return [f"  first integrals: none found among {len(self.candidates)} candidates "
                    f"({self.samples} random states)", *rejected]
        out = [f"  first integrals ({len(self.integrals)}, among {len(self.candidates)} "
               f"candidates at {self.samples} random states):"]
        out += ["    " + i.describe() for i in self.integrals]
        return out + rejected

    def evaluator(self, *, terms: bool = False):
        """``f(t, y, p) -> values`` of the integrals, shape (n,), at one state.

        With ``terms=True`` it also returns the values of every term ``c_k I_k`` of
        every integral, in order (the scale a combination's drift is measured by).
        """
        from kidym.simulation.numpy_engine import generate_python

        eq = self.equations
        outputs = {i.name: i.expression for i in self.integrals}
        if terms:
            for i in self.integrals:
                for k, (c, label) in enumerate(i.terms):
                    outputs[f"{i.name}#{k}"] = se.Float(c) * self._candidate(label)
        fn = generate_python(eq, outputs).function

        def values(t: float, y: np.ndarray, p: np.ndarray) -> np.ndarray:
            return np.asarray(fn(float(t), list(map(float, y)), list(map(float, p)))[3], float)

        return values

    def _candidate(self, label: str) -> Expr:
        return self.dictionary[label]


def first_integrals(model: Model | Equations, *, samples: int | None = None,
                    seed: int = 0, budget_s: float = 5.0,
                    parameters: Mapping[str, float] | None = None,
                    max_speeds: int = MAX_SPEEDS) -> FirstIntegrals:
    """Find the first integrals of ``model`` (see the module text for the method).

    Parameters
    ----------
    model : Model or Equations
        A model (derived here) or its equations (their model is derived again with the
        candidates' names).
    samples : int, optional
        Random states; default ``3·(number of candidates) + 12``.
    seed : int
        Seed of the random states (the search is deterministic for a seed).
    budget_s : float
        Wall time allowed for the symbolic proofs, in all; ``0`` skips them.
    parameters : mapping of str to float, optional
        Parameter values overriding the model's.
    max_speeds : int
        Models with more independent speeds are not searched (``skipped`` says so): the
        witness costs ``O(n_w)`` evaluations per candidate and sample, and the dictionary
        grows with the bodies (the 10-link chain takes over a minute).

    Returns
    -------
    FirstIntegrals
    """
    if isinstance(model, Equations):
        model = model.model
    if model.controls:
        return FirstIntegrals((), None, skipped="the model has controls (НЕИЗВЕСТНЫЕ): their "
                              "values come from the programmed constraints at each state")
    if model.inputs:
        return FirstIntegrals((), None, skipped="the model has external inputs (ВХОДЫ): "
                              "their values come from outside, given only to a run")
    n_speeds = len(model.pseudo_velocities) or len(model.coordinates)
    if n_speeds > max_speeds:
        return FirstIntegrals((), None, skipped=f"{n_speeds} speeds, more than max_speeds = "
                              f"{max_speeds}")
    eq = derive(_with_candidate_outputs(model))
    if eq.n_w > max_speeds:
        return FirstIntegrals((), None, skipped=f"{eq.n_w} speeds, more than max_speeds = "
                              f"{max_speeds}")
    if eq.n_w == 0:
        return FirstIntegrals((), None, skipped="no degrees of freedom")
    if eq.n_w <= eq.m:
        return FirstIntegrals((), None, skipped="no degrees of freedom: the constraints "
                              "prescribe the motion")
    cands = _candidates(eq, model)
    graph = eq.graph
    for c in cands:
        c.rate = graph.dt(c.expr)
        for w, a in zip(eq.speeds, eq.accelerations):
            if graph.depends_on(c.expr, w):
                c.rate += graph.diff(c.expr, w) * a
    size = _operations([*eq.roots(), *(c.expr for c in cands), *(c.rate for c in cands)],
                       eq, MAX_OPERATIONS)
    if size > MAX_OPERATIONS:
        return FirstIntegrals((), None, skipped=f"the candidates and their rates written out "
                              f"take over {MAX_OPERATIONS} operations, too many to evaluate "
                              "at random states; simplify the model's formulas")
    n = samples if samples is not None else 3 * len(cands) + 12
    rng = np.random.default_rng(seed)
    p = model_parameters(eq, parameters)
    span = model.time_span(parameters)
    breaks = time_breakpoints(eq, model, cands, p, span)
    pieces = piece_times(breaks, span, rng)
    values, rates, scales = witness(eq, model, cands, p, n + len(pieces), rng, parameters,
                                     pieces)
    found = select(cands, values, rates, scales)
    found, rejected = continuous_integrals(eq, model, cands, found, breaks, p, rng, parameters)
    deadline = time.monotonic() + budget_s
    out = []
    counts: dict[str, int] = {}
    for kind, terms in found:
        expr = sum((se.Float(c) if abs(c - round(c)) > 1e-12 else se.Integer(round(c)))
                   * cands[k].expr for c, k in terms)
        left = deadline - time.monotonic()
        proof = ("symbolic" if len(terms) == 1 and left > 0
                 and _proved(eq, kind, cands[terms[0][1]], left) else "numeric")
        name = integral_name(kind, terms, cands, counts)
        how = cands[terms[0][1]].how if len(terms) == 1 else (
            "linear integral: a null vector of the candidates' rates (constant "
            "coefficients)")
        out.append(FirstIntegral(name, kind, tuple((c, cands[k].label) for c, k in terms),
                                 expr, how, proof))
    return FirstIntegrals(tuple(out), eq, len(values), tuple(c.label for c in cands),
                          dictionary={c.label: c.expr for c in cands},
                          breakpoints=tuple(breaks), rejected=tuple(rejected))


def _operations(exprs: list[Expr], eq: Equations, limit: int) -> int:
    """Operations of the code that evaluates ``exprs`` (each named intermediate of the
    equations written once, as :func:`~kidym.simulation.numpy_engine.generate_python`
    writes it); counting stops soon after ``limit`` is passed."""
    inter = eq.intermediates(list(exprs))
    sizes: dict[Expr, int] = {}
    total = 0
    for root in [*exprs, *(e for _, e in inter)]:
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            x, ready = stack.pop()
            if x in sizes:
                continue
            if ready:
                sizes[x] = 1 + sum(sizes[a] for a in x.args)
                continue
            stack.append((x, True))
            stack.extend((a, False) for a in x.args if a not in sizes)
        total += sizes[root]
        if total > limit:
            break
    return total


# ------------------------------------------------------------------ candidates
def _with_candidate_outputs(model: Model) -> Model:
    """``model`` asking also for the generated names of its bodies and their rates."""
    extra = []
    for b in model.bodies:
        extra += [p + b.name for p in gen.ROTATION + gen.CENTRE + gen.OMEGA]
        extra += [p + b.name + "'t" for p in gen.CENTRE]
    outputs = tuple(dict.fromkeys([*model.outputs, *extra]))
    return dataclasses.replace(model, outputs=outputs)


def _candidates(eq: Equations, model: Model) -> list[Candidate]:
    graph = eq.graph
    T, V = eq.kinetic_energy_named, eq.potential_energy_named
    out = [Candidate("T + Π", "energy", T + V,
                      "energy T + Π: no non-potential force, no explicit time")]
    generalized = eq.n_q == eq.n_w and all(
        graph.expand(x) == w for x, w in zip(eq.qdot, eq.speeds))
    if generalized:
        L = T - V
        h = sum((w * graph.diff(L, w) for w in eq.speeds), se.Integer(0)) - L
        out.append(Candidate("Σ q't ∂L/∂q't − L", "jacobi", h,
                              "Jacobi integral Σ q't ∂L/∂q't − L: the Lagrangian has no "
                              "explicit time"))
    for k, w in enumerate(eq.speeds):
        pk = graph.diff(T, w)
        if generalized:
            q = eq.coordinates[k]
            cyclic = not graph.depends_on(T, q) and not graph.depends_on(V, q)
            label = f"∂T/∂{q}'t"
            if cyclic:
                out.append(Candidate(label, "cyclic momentum", pk,
                                      f"momentum of the cyclic coordinate {q} (absent from "
                                      "T and Π, no force along it)"))
            else:
                out.append(Candidate(label, "momentum", pk,
                                      f"generalized momentum of {q}"))
        else:
            out.append(Candidate(f"∂T/∂{w}", "momentum", pk, f"quasi-momentum of {w}"))
    for w in eq.speeds:
        out.append(Candidate(str(w), "speed", w, f"the speed {w} is constant"))
    o = eq.outputs_named
    for b in model.bodies:
        def v(prefix, b=b):
            return o[prefix + b.name]
        om = [v(p) for p in gen.OMEGA]
        S = [[v(f"S{i}{j}") for j in (1, 2, 3)] for i in (1, 2, 3)]
        rc = [v(p) for p in gen.CENTRE]
        fixed = [sum((S[i][j] * om[j] for j in range(3)), se.Integer(0)) for i in range(3)]
        lin = [(f"ω{a}{b.name}", om[i], "body axes") for i, a in enumerate("XYZ")]
        lin += [(f"(S·ω){a}{b.name}", fixed[i], "fixed axes") for i, a in enumerate("xyz")]
        lin.append((f"(ω·r_C){b.name}", sum((om[i] * rc[i] for i in range(3)),
                                            se.Integer(0)), "ω read in the fixed frame"))
        lin.append((f"(Sω·r_C){b.name}", sum((fixed[i] * rc[i] for i in range(3)),
                                             se.Integer(0)), "ω read in the body frame"))
        lin += [(f"{p}{b.name}'t", o[p + b.name + "'t"], "mass-centre velocity")
                for p in gen.CENTRE]
        for label, expr, _what in lin:
            out.append(Candidate(label, "linear", expr, ""))
    # one candidate per distinct expression (ωXBall of a fixed-frame ball is a speed)
    seen: set = set()
    unique = []
    for c in out:
        key = se.sympify(c.expr)
        if key in seen or key == 0:
            continue
        seen.add(key)
        unique.append(c)
    return unique


# --------------------------------------------------------------- symbolic proof
def _zero(expr) -> bool:
    """Whether ``expr`` (a SymPy expression) is identically zero: expanded, then with
    the trigonometric functions written as exponentials."""
    import sympy

    e = sympy.expand(expr)
    if e == 0:
        return True
    return sympy.expand(sympy.expand_trig(e).rewrite(sympy.exp)) == 0


def _child(conn, conditions) -> None:  # pragma: no cover (runs in a child)
    try:
        conn.send(all(_zero(c) for c in conditions))
    except Exception:  # any failure means "not proved"
        conn.send(False)
    conn.close()


def _proved(eq: Equations, kind: str, candidate: Candidate, budget_s: float) -> bool:
    """Whether the rate of ``candidate`` is identically zero, within ``budget_s`` seconds.

    With ``y`` such that ``M y = (∂I/∂w)ᵀ`` (checked), ``İ = İ|_{ẇ=0} + yᵀ M ẇ
    = İ|_{ẇ=0} + yᵀ F``: two identities without inverting ``M``, each expanded (and the
    trigonometric functions rewritten as exponentials) to zero.
    """
    import sympy  # only for a proof: ``kidym check`` of a model with none loads no SymPy

    g = eq.graph
    n = eq.n_w
    if kind in ("energy", "jacobi"):
        y = [sympy.Symbol(str(w)) for w in eq.speeds]
    elif kind in ("cyclic momentum", "momentum"):
        k = next(i for i, w in enumerate(eq.speeds)
                 if se.sympify(candidate.expr) == se.sympify(g.diff(
                     eq.kinetic_energy_named, w)))
        y = [sympy.Integer(1 if i == k else 0) for i in range(n)]
    else:
        return False
    try:
        def ex(x):
            return sympy.sympify(g.expand(x))

        zero = {a: 0 for a in eq.accelerations}
        r0 = ex(se.sympify(candidate.rate).xreplace(zero))
        M = [[ex(x) for x in row] for row in eq.mass_matrix_named]
        grad = [ex(g.diff(candidate.expr, w)) for w in eq.speeds]
        conditions = [sum((M[i][j] * y[j] for j in range(n)), sympy.Integer(0)) - grad[i]
                      for i in range(n)]
        conditions.append(r0 + sum((y[i] * ex(eq.forcing_named[i]) for i in range(n)),
                                   sympy.Integer(0)))
        if eq.constraints is not None:
            # the reactions' part yᵀGᵀλ = λᵀ(G y) vanishes on the manifold: G w = c − g
            # with c = 0 there, so g = 0 for y = w; G e_k = 0 for y = e_k
            cons = eq.constraints
            for row, c in zip(cons.jacobian, cons.velocity):
                if kind in ("energy", "jacobi"):
                    conditions.append(ex(c) - sum((ex(gij) * y[j] for j, gij in
                                                   enumerate(row)), sympy.Integer(0)))
                else:
                    conditions.append(sum((ex(gij) * y[j] for j, gij in enumerate(row)),
                                          sympy.Integer(0)))
    except (TypeError, ValueError, RecursionError):
        return False
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, conditions), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(budget_s):
            return bool(parent.recv())
        return False
    except EOFError:
        return False
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join(timeout=5)
        parent.close()


# ------------------------------------------------------------------ monitoring
def integral_drift(found: FirstIntegrals, result, *,
                   parameters: Mapping[str, float] | None = None,
                   record: bool = True) -> dict[str, dict]:
    """``max_t |I(t) − I(0)|`` of each integral over a run, absolute and relative.

    An event that resets the state (``СОБЫТИЯ``: an impact) changes an integral by a
    jump that is physics, not error: the drift is then measured from the start of each
    stretch between resets (``I(t) − I(t_k)``, ``t_k`` the last reset before ``t``), and
    ``resets`` counts them.

    With ``record`` (default) the drift is also stored in
    ``result.stats["first_integrals"]`` (written to ``results.json`` by
    :meth:`Result.write`).

    Parameters
    ----------
    found : FirstIntegrals
        From :func:`first_integrals` on the run's model.
    result : kidym.simulation.result.Result
        A run of either engine (its states are evaluated here, after the run).
    parameters : mapping of str to float, optional
        The parameter values of the run.
    record : bool
        Store the drift in ``result.stats["first_integrals"]``.

    Returns
    -------
    dict of str to dict
        By integral name: ``max_abs`` (``max |I − I(0)|``), ``scale`` (the largest of
        ``max |I|`` and ``max |c_k I_k|`` over its terms: a combination can stay near 0
        while its terms do not), ``relative`` (``max_abs / scale``, ``None`` for scale
        0), ``kind``, ``initial`` (``I(0)``), ``resets`` (the resets of the state
        between which the drift was measured).
    """
    from kidym.simulation.energy import reset_starts

    if not found.integrals or not np.size(result.t):
        return {}
    f = found.evaluator(terms=True)
    p = model_parameters(found.equations, parameters)
    names = [str(s) for s in (*found.equations.coordinates, *found.equations.speeds)]
    y = np.array([result.values[n] for n in names])
    vals = np.array([f(t, y[:, i], p) for i, t in enumerate(result.t)])
    out: dict[str, dict] = {}
    col = len(found.integrals)
    starts = reset_starts(result)
    first = np.zeros(len(result.t), dtype=int)    # the index each output is measured from
    for a in starts[1:]:
        first[a:] = a
    for j, integral in enumerate(found.integrals):
        v = vals[:, j]
        parts = vals[:, col:col + len(integral.terms)]
        col += len(integral.terms)
        drift = float(np.max(np.abs(v - v[first])))
        scale = float(max(np.max(np.abs(v)), np.max(np.abs(parts))))
        out[integral.name] = {"kind": integral.kind, "max_abs": drift, "scale": scale,
                              "relative": drift / scale if scale > 0 else None,
                              "initial": float(v[0]), "resets": len(starts) - 1}
    if record:
        result.stats["first_integrals"] = out
    return out


def describe_drift(drift: Mapping[str, Mapping]) -> list[str]:
    """Lines ``kidym run`` prints: the drift of each integral."""
    out = []
    for name, d in drift.items():
        text = f"first integral {name} ({d['kind']}): max |I - I(0)| = {d['max_abs']:.3g}"
        if d["relative"] is not None:
            text += f" (relative to its scale {d['scale']:.3g}: {d['relative']:.3g})"
        if d.get("resets"):
            text += f", between the {d['resets']} resets of the state"
        out.append(text)
    return out
