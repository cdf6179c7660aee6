"""Equations in print: what is printed (:class:`EquationSet`) and plain text / JSON.

The printed form is the *structural* one, as the papers write it (seed 000 eq. (25)):
one equation per independent speed ``w_i``,

    Σ_j M_ij ẇ_j − F_i = 0,

with ``M_ij`` and ``F_i`` short sums over the *named* kinematic quantities
(rotation-matrix entries, angular velocities, columns of the structural matrices),
which are listed with their formulas in evaluation order — the protocol of the
original's operators. It stays short for big models. Three stages:

``final``
    the equations of motion in the model's independent speeds (default);
``holonomic``
    the first stage of the two-stage algorithm, ``U_hol`` of the holonomic system
    in generalized coordinates (only for models with pseudo-velocities or
    velocity constraints);
``cauchy``
    the Cauchy form: kinematic equations ``q̇ = B w + β``, mass matrix ``M`` and
    forcing ``F`` (``M ẇ = F``).

The *expanded* form (every name substituted) is given on request, simplified
within a time budget (:mod:`kidym.report.simplify`), with a warning instead of a
silent blow-up. LaTeX and Markdown are in :mod:`kidym.report.latex`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import symengine as se
import sympy

from kidym.eom.system import speed_name
from kidym.report.compact import CompactForm, compact_form
from kidym.report.readable import NameTable, name_table
from kidym.report.simplify import simplify_with_budget
from kidym.symbolic.identifiers import IdentifierMap

if TYPE_CHECKING:   # (Equations' Jupyter view calls this module)
    from kidym.eom.equations import Equations

#: Above this many operations in the named quantities, the expanded form is left out of
#: JSON unless asked for.
EXPANDED_LIMIT = 1_000

#: Above this many operations the expanded form is printed with a warning.
EXPANDED_WARN = 20_000

STAGES = ("final", "holonomic", "cauchy")

Expr = se.Basic


@dataclass(frozen=True)
class Relation:
    """One printed line ``lhs = rhs`` (``label`` says what it is, e.g. the speed)."""

    lhs: Expr
    rhs: Expr
    label: str = ""


@dataclass(frozen=True)
class EquationSet:
    """Everything one ``kidym equations`` call prints, independent of the format.

    Attributes
    ----------
    equations : Equations
        The equations of the chosen stage.
    stage : {"final", "holonomic", "cauchy"}
        Which stage.
    kinematic : list of Relation
        ``q̇ = B w + β`` row by row (lhs the symbol ``q't``).
    motion : list of Relation
        Per speed, ``Σ_j M_ij ẇ_j − F_i = 0`` (stages ``final``/``holonomic``).
    mass_matrix : list of Relation
        Upper triangle of ``M``, non-zero entries (stage ``cauchy``).
    forcing : list of Relation
        ``F`` (stage ``cauchy``).
    intermediates : list of Relation
        The named quantities the above use, in evaluation order.
    expanded : list of Relation
        The same equations with every name substituted (empty unless asked).
    sizes : dict of str to int
        Operation counts: ``structural`` (the equations), ``named`` (the named
        quantities), ``expanded`` (when expanded).
    warnings : list of str
        About the expanded form (size, simplification left undone).
    compact : CompactForm or None
        The compact form of the final stage (seed 000 eq. (25)): the equations over the
        bodies' accelerations in the model's names (:mod:`kidym.report.compact`);
        ``None`` when not asked for or at another stage.
    names : NameTable or None
        How the named quantities are printed (``agXRod2#1`` → ``a_x(Rod2)⁽¹⁾``,
        :mod:`kidym.report.readable`); ``None``: by their internal names.
    """

    equations: Equations
    stage: str
    kinematic: list[Relation]
    motion: list[Relation]
    mass_matrix: list[Relation]
    forcing: list[Relation]
    intermediates: list[Relation]
    expanded: list[Relation] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    compact: CompactForm | None = None
    names: NameTable | None = field(default=None, repr=False)

    @property
    def model_name(self) -> str:
        """Name of the model."""
        return self.equations.model.name

    def state_names(self) -> list[str]:
        """Coordinates, their rates, speeds: the names that partial derivatives refer to."""
        eq = self.equations
        names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
        return names + [speed_name(str(q)) for q in eq.coordinates]


def stage_equations(eq: Equations, stage: str) -> Equations:
    """The equations of ``stage`` (``holonomic`` → ``eq.holonomic``).

    Raises
    ------
    ValueError
        Unknown stage, or ``holonomic`` for a model that has no such stage.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}; got `{stage}`")
    if stage != "holonomic":
        return eq
    hol = getattr(eq, "holonomic", None)
    if hol is None:
        raise ValueError(
            f"model `{eq.model.name}` has no holonomic stage: its speeds are the "
            "generalized velocities, so the final equations are the holonomic ones "
            "(use --stage final)")
    return hol


def accelerations(eq: Equations) -> list[se.Symbol]:
    """``ẇ`` as symbols named ``w't`` (``phi1't't``, ``ωXКуля't``), shape (n_w,)."""
    return [se.Symbol(speed_name(str(w))) for w in eq.speeds]


def multipliers(eq: Equations) -> list[se.Symbol]:
    """Symbols ``λf`` of the constraints' multipliers (none without constraints)."""
    cons = eq.constraints
    return [] if cons is None else [se.Symbol(n) for n in cons.multiplier_names]


def motion_lhs(eq: Equations) -> list[Expr]:
    """``U_i = Σ_j M_ij ẇ_j − F_i − Σ_k G_ki λ_k`` over named quantities, shape (n_w,)
    (the last sum only with constraints: ``M ẇ = F + Gᵀλ``)."""
    wdot = accelerations(eq)
    lam = multipliers(eq)
    out = []
    for i in range(eq.n_w):
        u = se.Integer(0)
        for j in range(eq.n_w):
            m = eq.mass_matrix_named[i][j]
            if m != 0:
                u += m * wdot[j]
        for k, lk in enumerate(lam):
            g = eq.constraints.jacobian[k][i]
            if g != 0:
                u -= g * lk
        for h, us in _control_terms(eq, i):
            u -= h * us
        out.append(u - eq.forcing_named[i])
    return out


def _control_terms(eq: Equations, i: int) -> list[tuple[Expr, se.Symbol]]:
    """``(H_is, u_s)`` of speed ``i`` with ``H_is ≠ 0`` (none without controls)."""
    ctl = eq.controls
    if ctl is None:
        return []
    return [(h, u) for h, u in zip(ctl.inputs[i], ctl.controls) if h != 0]


def control_lines(eq: Equations, names: NameTable | None = None) -> list[str]:
    """The controls and their programmed constraints as text (empty without controls;
    named quantities printed by ``names`` when given)."""
    ctl = eq.controls
    if ctl is None:
        return []

    def text(expr) -> str:
        return printed_text(expr, names)

    out = ["", f"Controls ({ctl.s}: {', '.join(ctl.control_names)}; M·ẇ = F + H·u, H = ∂F/∂u, "
               "F at u = 0), solved from the programmed constraints G·ẇ = b (seed 004 (5.5), "
               "(5.6)):"]
    for i, w in enumerate(eq.speeds):
        row = ", ".join(f"{u}: {text(h)}" for h, u in _control_terms(eq, i))
        if row:
            out.append(f"  H[{w}] = {{{row}}}")
    for k, name in enumerate(ctl.names):
        pc = eq.model.programmed[k]
        law = (f"ż = k z, k = {text(pc.k)}" if pc.first_order
               else f"ÿ = h y + k ẏ, h = {text(pc.h)}, k = {text(pc.k)}")
        out.append(f"  {name} = 0  ({'first order' if pc.first_order else 'holonomic'}; {law})")
        row = ", ".join(f"{w}: {text(g)}" for w, g in zip(eq.speeds, ctl.jacobian[k]) if g != 0)
        out.append(f"    G[{name}] = {{{row}}}")
        out.append(f"    b[{name}] = {text(_formula(eq, ctl.target[k], f'b[{name}]', names))}")
    return out


def _formula(eq: Equations, expr, label: str, names: NameTable | None):
    """``expr``, or its formula where it is the named quantity printed as ``label``
    (``b[fx] = b[fx]`` says nothing)."""
    expr = se.sympify(expr)
    if (names is not None and expr.is_Symbol and expr in eq.graph
            and names.text(str(expr)) == label):
        return eq.graph.formula(expr)
    return expr


def constraint_lines(eq: Equations, names: NameTable | None = None) -> list[str]:
    """The constraints as text: ``Φ``, ``G``, ``γ`` (empty without constraints; named
    quantities printed by ``names`` when given)."""
    cons = eq.constraints
    if cons is None:
        return []

    def text(expr) -> str:
        return printed_text(expr, names)

    out = ["", f"Constraints ({cons.m}; the equations of motion are M·ẇ = F + Gᵀλ and "
               "G·ẇ = γ, multipliers " + ", ".join(cons.multiplier_names) + "):"]
    for k, name in enumerate(cons.names):
        kind = "holonomic" if not cons.holonomic or cons.holonomic[k] else "velocity"
        out.append(f"  {name} = 0  ({kind})")
        row = ", ".join(f"{w}: {text(g)}" for w, g in zip(eq.speeds, cons.jacobian[k]) if g != 0)
        out.append(f"    G[{name}] = ∂{name}'t/∂w = {{{row}}}")
        out.append(f"    γ[{name}] = {text(_formula(eq, cons.gamma[k], f'γ[{name}]', names))}")
    return out


#: SymEngine writes a product with a negative rational coefficient inside a sum as
#: ``a + (-1/2)*b``; the same term with its sign outside is ``a - (1/2)*b``
_NEGATIVE_COEFFICIENT = re.compile(r" \+ \(-(\d+/\d+)\)\*")


def text(expr) -> str:
    """An expression as text (SymEngine's form, parsable by ``sympify`` once names are
    identifiers), never with ``+ -``: a negative term of a sum is written ``a - b``."""
    return _NEGATIVE_COEFFICIENT.sub(r" - (\1)*", str(expr))


def printed(expr, names: NameTable | None):
    """``expr`` with its named quantities renamed as ``names`` prints them (itself
    without ``names``)."""
    if names is None:
        return expr
    expr = se.sympify(expr)
    rename = {s: se.Symbol(names.text(str(s))) for s in expr.free_symbols
              if names.text(str(s)) != str(s)}
    return expr.xreplace(rename) if rename else expr


def printed_text(expr, names: NameTable | None) -> str:
    """:func:`text` of ``expr`` with the names ``names`` prints."""
    return text(printed(expr, names))


def _signed(sign: str, term, names: NameTable | None = None) -> str:
    """``sign`` (``+`` or ``-``) and ``term`` as one term of a sum: ``- b``, never
    ``+ -b`` or ``+ (-b)``; a sum is put in parentheses."""
    term = printed(term, names)
    body = text(term)
    if body.startswith(("-", "(-")) and not text(-term).startswith(("-", "(-")):
        sign, body = ("-" if sign == "+" else "+"), text(-term)
    return f"{sign} ({body})" if term.is_Add else f"{sign} {body}"


def motion_text(eq: Equations, i: int, names: NameTable | None = None) -> str:
    """``Σ_j M_ij ẇ_j − F_i`` as text, terms in the order of the speeds (named
    quantities printed by ``names`` when given)."""
    parts: list[str] = []
    for m, acc in zip(eq.mass_matrix_named[i], accelerations(eq)):
        if m == 0:
            continue
        parts.append(f"+ {acc}" if m == 1 else f"{_signed('+', m, names)}*{acc}")
    for k, lk in enumerate(multipliers(eq)):
        g = eq.constraints.jacobian[k][i]
        if g != 0:
            parts.append(f"{_signed('-', g, names)}*{lk}")
    for h, us in _control_terms(eq, i):
        parts.append(f"- {us}" if h == 1 else f"{_signed('-', h, names)}*{us}")
    f = eq.forcing_named[i]
    if f != 0:
        parts.append(_signed("-", f, names))
    out = " ".join(parts) or "0"
    if out.startswith("+ "):
        return out[2:]
    return "-" + out[2:] if out.startswith("- ") else out


def _ops(exprs) -> int:
    return sum(int(se.count_ops(se.sympify(x))) for x in exprs)


def equation_set(eq: Equations, *, stage: str = "final", expanded: bool = False,
                 simplify_budget: float = 10.0, expand_budget: float | None = None,
                 progress=None, compact: bool = True) -> EquationSet:
    """Collect what to print for ``eq`` at ``stage``.

    Parameters
    ----------
    eq : Equations
        Derived equations (the final stage; ``holonomic`` uses ``eq.holonomic``).
    stage : {"final", "holonomic", "cauchy"}
        Which equations.
    expanded : bool
        Also give them with every named quantity substituted.
    simplify_budget : float
        Seconds allowed for simplifying the expanded form (0: none).
    expand_budget : float, optional
        Seconds allowed for expanding (substituting the named quantities); the
        relations not expanded in time are named in ``warnings``. Default: no limit.
    progress : callable, optional
        ``progress(done, total)`` after each relation is expanded.
    compact : bool
        At the ``final`` stage, also form the compact equations
        (:func:`kidym.report.compact.compact_form`; given up past its size or time
        budget, with the reason).

    Raises
    ------
    ValueError
        For an unknown stage or a missing holonomic stage.
    """
    eq_s = stage_equations(eq, stage)
    kinematic = [Relation(se.Symbol(speed_name(str(q))), rate, str(q))
                 for q, rate in zip(eq_s.coordinates, eq_s.qdot)]
    motion: list[Relation] = []
    mass: list[Relation] = []
    forcing: list[Relation] = []
    if stage == "cauchy":
        for i in range(eq_s.n_w):
            for j in range(i, eq_s.n_w):
                val = eq_s.mass_matrix_named[i][j]
                if val != 0:
                    mass.append(Relation(se.Symbol(f"M[{eq_s.speeds[i]}, {eq_s.speeds[j]}]"),
                                         val, f"{i},{j}"))
        forcing = [Relation(se.Symbol(f"F[{w}]"), f, str(w))
                   for w, f in zip(eq_s.speeds, eq_s.forcing_named)]
        roots = [r.rhs for r in (*kinematic, *mass, *forcing)]
        if eq_s.constraints is not None:
            roots += eq_s.constraints.roots()
        if eq_s.controls is not None:
            roots += eq_s.controls.roots()
    else:
        motion = [Relation(u, se.Integer(0), str(w))
                  for w, u in zip(eq_s.speeds, motion_lhs(eq_s))]
        roots = [r.rhs for r in kinematic] + [r.lhs for r in motion]
        if eq_s.constraints is not None:
            roots += eq_s.constraints.roots()
        if eq_s.controls is not None:
            roots += eq_s.controls.roots()
    inter = [Relation(s, e, "") for s, e in eq_s.intermediates(roots)]
    sizes = {"structural": _ops([r.rhs for r in (*mass, *forcing)] + [r.lhs for r in motion]),
             "kinematic": _ops([r.rhs for r in kinematic]),
             "named": _ops([r.rhs for r in inter]), "named_count": len(inter)}
    cf = compact_form(eq_s, named=len(inter)) if compact and stage == "final" else None
    names = name_table(eq_s, [str(r.lhs) for r in inter])
    out = EquationSet(eq_s, stage, kinematic, motion, mass, forcing, inter, sizes=sizes,
                      compact=cf, names=names)
    if expanded:
        _add_expanded(out, simplify_budget, expand_budget, progress)
    return out


def _add_expanded(es: EquationSet, budget: float, expand_budget: float | None = None,
                  progress=None) -> None:
    import time

    eq = es.equations
    g = eq.graph
    if es.stage == "cauchy":
        todo = [(r.lhs, r.rhs) for r in (*es.kinematic, *es.mass_matrix, *es.forcing)]
    else:
        todo = [(r.lhs, r.rhs) for r in es.kinematic]
        todo += [(se.Symbol(f"U[{r.label}]"), r.lhs) for r in es.motion]
    start = time.perf_counter()
    pairs = []
    for k, (lhs, x) in enumerate(todo):
        if expand_budget is not None and time.perf_counter() - start > expand_budget:
            left = [str(lhs) for lhs, _ in todo[k:]]
            es.warnings.append(
                f"expansion stopped at the time budget ({expand_budget:g} s): {len(left)} of "
                f"{len(todo)} not expanded: " + ", ".join(left)
                + " (raise --budget, or read the structural form)")
            break
        pairs.append((lhs, g.expand(x)))
        if progress is not None:
            progress(k + 1, len(todo))
    size = _ops([x for _, x in pairs])
    es.sizes["expanded"] = size
    if size > EXPANDED_WARN:
        es.warnings.append(
            f"the expanded form has {size} operations against {es.sizes['structural']} in "
            f"the structural equations (+ {es.sizes['named']} in {es.sizes['named_count']} "
            "named quantities); it is printed unsimplified — prefer the structural form")
        exprs = [x for _, x in pairs]   # (SymPy's conversion of long sums takes minutes)
    else:
        exprs, warns = simplify_with_budget([sympy.sympify(x) for _, x in pairs], budget)
        es.warnings.extend(warns)
    es.expanded.extend(Relation(lhs, x, "") for (lhs, _), x in zip(pairs, exprs))


# ------------------------------------------------------------------- plain text
def size_summary(es: EquationSet) -> str:
    """``N operations in the equations, M in K named quantities[; expanded: X operations]``
    (the sizes every format states)."""
    s = es.sizes
    text = (f"{s['structural']} operations in the equations, {s['named']} in "
            f"{s['named_count']} named quantities")
    if "expanded" in s:
        text += f"; expanded: {s['expanded']} operations"
    return text


def to_text(eq: Equations, *, expanded: bool = False, stage: str = "cauchy",
            simplify_budget: float = 10.0) -> str:
    """The equations as Unicode text (names exactly as in the model).

    Parameters
    ----------
    eq : Equations
        Derived equations.
    expanded : bool
        Also print them with every name substituted (may be long; simplified within
        ``simplify_budget`` seconds).
    stage : {"final", "holonomic", "cauchy"}
        Per-speed equations of motion (``final``/``holonomic``) or the Cauchy form.
    """
    return text_of(equation_set(eq, stage=stage, expanded=expanded,
                                simplify_budget=simplify_budget))


def text_of(es: EquationSet) -> str:
    """Render an :class:`EquationSet` as Unicode text."""
    eq = es.equations
    m = eq.model
    title = {"final": "equations of motion", "holonomic": "holonomic stage (U_hol)",
             "cauchy": "Cauchy form"}[es.stage]
    bodies = f"{len(m.bodies)} bod{'y' if len(m.bodies) == 1 else 'ies'}"
    out = [f"Model {m.name}: {eq.n_q} coordinates, {eq.n_w} speeds, {bodies} — {title}"]
    out.append("coordinates q: " + ", ".join(map(str, eq.coordinates)))
    out.append("speeds w:      " + ", ".join(map(str, eq.speeds)))
    if m.parameters:
        out.append("parameters:    " + ", ".join(f"{p.name} = {p.value:g}"
                                                 for p in m.parameters))
    out.append(f"size: {size_summary(es)}")
    out.append("M and F:       " + (
        "by composite bodies (I, h, m: inertia below a frame; f, n: their wrench; "
        "H, L: momentum of a speed's unit motion)" if eq.formation == "composite"
        else "body by body over partial velocities (structural matrices)"))
    names = es.names

    def shown(expr) -> str:
        return printed_text(expr, names)

    out.append("")
    out.append("Kinematic equations  q̇ = B·w + β:")
    for r in es.kinematic:
        out.append(f"  d{r.label}/dt = {shown(r.rhs)}")
    out.extend(compact_lines(es.compact))
    out.append("")
    out.append(f"Named quantities ({len(es.intermediates)}, in evaluation order):")
    for r in es.intermediates:
        lhs = str(r.lhs) if names is None else names.text(str(r.lhs))
        out.append(f"  {lhs} = {shown(r.rhs)}")
    out.extend(legend_lines(es))
    if es.motion:
        out.append("")
        out.append("Equations of motion, one per independent speed (ẇ written w't):")
        for i, r in enumerate(es.motion):
            out.append(f"  [{r.label}]  {motion_text(eq, i, names)} = 0")
    if es.mass_matrix:
        out.append("")
        out.append(f"Mass matrix M (symmetric, {eq.n_w}×{eq.n_w}), upper triangle:")
        for r in es.mass_matrix:
            out.append(f"  {r.lhs} = {shown(r.rhs)}")
    if es.forcing:
        out.append("")
        out.append("Forcing F  (M·ẇ = F" + (" + Gᵀλ" if eq.constraints is not None
                                             else " + H·u" if eq.controls is not None
                                             else "") + "):")
        for r in es.forcing:
            out.append(f"  {r.lhs} = {shown(r.rhs)}")
    out.extend(constraint_lines(eq, names))
    out.extend(control_lines(eq, names))
    if es.expanded:
        out.append("")
        out.append("Expanded form (every named quantity substituted):")
        for r in es.expanded:
            out.append(f"  {r.lhs} = {text(r.rhs)}")
    for w in es.warnings:
        out.append(f"warning: {w}")
    return "\n".join(out) + "\n"


def legend_lines(es: EquationSet) -> list[str]:
    """How the printed names of the named quantities read: one line per kind used
    (:data:`kidym.report.readable.LEGEND`); empty without a name table."""
    if es.names is None or not es.intermediates:
        return []
    return _legend_block(es.names.legend(str(r.lhs) for r in es.intermediates))


def _legend_block(legend: list[tuple[str, str, str]]) -> list[str]:
    if not legend:
        return []
    width = max(len(key) for key, _, _ in legend)
    return ["  where the names read (F: a frame, B: a body, w: a speed or coordinate):",
            *(f"    {key:<{width}}  {meaning}" for key, _, meaning in legend)]


def compact_legend(cf: CompactForm) -> list[tuple[str, str, str]]:
    """``(text key, LaTeX key, meaning)`` of each kind of printed name the compact form
    uses (``X_C(B)``, ``Ẋ`` …; :data:`kidym.report.readable.LEGEND`)."""
    if cf.names is None or cf.reason:
        return []
    return cf.names.legend(cf.symbols())


def compact_lines(cf: CompactForm | None) -> list[str]:
    """The compact form as text lines, in the names the structural form prints
    (``Ẍ_C(Pole)``, the model's own as written: ``x't't`` for ẍ)."""
    if cf is None:
        return []
    if cf.reason:
        return ["", f"({cf.reason}; the structural form follows)"]
    out = ["", "Equations of motion, compact form (seed 000 eq. (25); r̈ of the mass "
               "centres and ε of the bodies as named):"]
    for w, u in zip(cf.speeds, cf.equations):
        out.append(f"  [{w}]  {text(cf.printed(u))} = 0")
    if cf.where:
        out.append("  where")
        for sym, value in cf.where:
            out.append(f"    {cf.printed(sym)} = {text(cf.printed(value))}")
    out.extend(_legend_block(compact_legend(cf)))
    return out


# ------------------------------------------------------------------------ JSON
def to_json(eq: Equations, *, expanded: bool | None = None, stage: str = "final") -> str:
    """Machine-readable equations (SPEC §4).

    Every expression is a string that :func:`sympy.sympify` parses, written with
    ASCII identifiers; ``symbols`` maps each identifier to its model name.
    ``intermediates`` lists the named quantities in evaluation order; the
    structural ``mass_matrix``/``forcing``/``kinematic_equations`` and the
    per-speed ``equations`` (``Σ M_ij ẇ_j − F_i``, with ``ẇ`` named ``w't``) refer
    to them. ``mass_matrix_expanded``/``forcing_expanded`` (every name substituted)
    are included when ``expanded`` is true, or by default when the model is small.
    ``stage`` picks the final equations or the holonomic stage (``cauchy`` is the
    final one: JSON always carries the Cauchy form). ``compact`` holds the final
    equations' compact form (:mod:`kidym.report.compact`): ``equations`` (``U_k`` with
    ``U_k = 0``), ``where`` and, for each acceleration symbol, the name it differentiates
    (twice, or once for a speed), ``printed`` (each of its identifiers as the text form
    prints it: ``Ẍ_C(Pole)``) and ``legend`` — or the ``reason`` it was not formed.
    ``printed``
    maps each identifier to the name the text form prints (``a_x(Rod2)⁽¹⁾``, see
    :mod:`kidym.report.readable`), ``symbols`` to the internal name (``agXRod2#1``), and
    ``legend`` says how the printed names of the named quantities read.
    """
    eq = stage_equations(eq, stage)
    ids = IdentifierMap()
    for s in (eq.graph.time, *eq.coordinates, *eq.speeds, *eq.parameters,
              *multipliers(eq)):
        ids(str(s))
    lhs = motion_lhs(eq)
    inter = eq.intermediates(list(eq.roots()) + lhs)
    for s, _ in inter:
        ids(str(s))

    def text(expr) -> str:
        sym = sympy.sympify(expr)
        rename = {s: sympy.Symbol(ids(s.name)) for s in sym.free_symbols}
        return str(sym.xreplace(rename))

    doc: dict = {
        "model": eq.model.name,
        "stage": "final" if stage == "cauchy" else stage,
        "coordinates": [ids(str(q)) for q in eq.coordinates],
        "speeds": [ids(str(w)) for w in eq.speeds],
        "accelerations": [ids(str(a)) for a in accelerations(eq)],
        "parameters": {ids(p.name): p.value for p in eq.model.parameters},
        "time": ids("t"),
        "kinematic_equations": [text(x) for x in eq.qdot],
        "intermediates": [[ids(str(s)), text(e)] for s, e in inter],
        "mass_matrix": [[text(x) for x in row] for row in eq.mass_matrix_named],
        "forcing": [text(x) for x in eq.forcing_named],
        "equations": [text(u) for u in lhs],
    }
    if expanded is None:
        size = sum(sympy.count_ops(sympy.sympify(e)) for _, e in inter)
        expanded = size < EXPANDED_LIMIT
    if expanded:
        doc["mass_matrix_expanded"] = [[text(eq.mass_matrix[i, j]) for j in range(eq.n_w)]
                                       for i in range(eq.n_w)]
        doc["forcing_expanded"] = [text(eq.forcing[i, 0]) for i in range(eq.n_w)]
    cons = eq.constraints
    if cons is not None:
        doc["constraints"] = {
            "names": list(cons.names),
            "holonomic": list(cons.holonomic),
            "multipliers": [ids(str(x)) for x in multipliers(eq)],
            "position": [text(x) for x in cons.position],
            "jacobian": [[text(x) for x in row] for row in cons.jacobian],
            "gamma": [text(x) for x in cons.gamma],
        }
    cf = compact_form(eq, named=len(inter)) if stage != "holonomic" else None
    if cf is not None:   # seed 000 eq. (25): over the bodies' accelerations
        for s, _ in cf.where:
            ids(str(s))
        doc["compact"] = ({"reason": cf.reason} if cf.reason else {
            "equations": [text(u) for u in cf.equations],
            "where": [[ids(str(s)), text(v)] for s, v in cf.where],
            "accelerations": {ids(str(a)): ids(n) for a, n in cf.accelerations.items()},
            # how the text form prints each of its symbols (unique within the form)
            "printed": {ids(n): cf.names.text(n) for n in cf.symbols()},
            "legend": [[key, meaning] for key, _, meaning in compact_legend(cf)]})
    ctl = eq.controls
    if ctl is not None:   # M ẇ = F + H u, G ẇ = b (seed 004; `forcing` is F at u = 0)
        doc["controls"] = {
            "controls": [ids(str(u)) for u in ctl.controls],
            "inputs": [[text(x) for x in row] for row in ctl.inputs],
            "programmed_constraints": list(ctl.names),
            "first_order": list(ctl.first_order),
            "jacobian": [[text(x) for x in row] for row in ctl.jacobian],
            "target": [text(x) for x in ctl.target],
        }
    doc["symbols"] = dict((ident, name) for name, ident in ids.items())
    # how the text form prints each (internal names are `symbols`, kept to map back)
    table = name_table(eq, [str(s) for s, _ in inter])
    made = cf.names if cf is not None and cf.names is not None else None

    def shown(name: str) -> str:   # (a name only the compact form uses: as it prints it)
        if made is not None and made.has(name) and not table.has(name):
            return made.text(name)
        return table.text(name)

    doc["printed"] = {ident: shown(name) for name, ident in ids.items()}
    doc["legend"] = [[key, meaning] for key, _, meaning in
                     table.legend(str(s) for s, _ in inter)]
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
