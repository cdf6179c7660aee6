"""The compact form of the equations of motion, as seed 000 prints the ball's (25).

One equation per independent speed ``w_k``, written over the bodies' accelerations
rather than over ``ẇ`` (seed 000 eq. (8) before the accelerations are expanded)::

    Σ_bodies [ m (r̈_C − g)·∂ṙ_C/∂w_k + ∂ω/∂w_k·(J ε + ω × J ω) ]
        + Σ_J-elements m_e p̈ ∂ṗ/∂w_k − Σ_forces P ∂ṗ/∂w_k − Σ_j G_jk λ_j = 0

with the partial velocities ``∂ṙ_C/∂w_k``, ``∂ω/∂w_k``, ``∂ṗ/∂w_k`` written out and
simplified in the model's own names: coordinates and speeds as written, the model's
definitions kept as names (``zC``, ``a``) and written back where their formula shows
up (``sqrt((R − r)² − xC² − yC²)`` → ``R − zC``). A centre-of-mass coordinate that is
a name of the model is differentiated under that name (``xC't't``); any other is named
after what it is (``XCPole``, its formula given under *where*). Angular accelerations
are those of the speeds where a projection of ``ω`` is a speed (``theta't't``, the
ball's ``ωXКуля't``), else ``ωXBody't`` (projections on the body's central axes). An
isotropic body (``J, J, J``) is written in the fixed frame (``ωXBody#λ``), where
``J ε + ω × J ω = J ε`` — the seed's form for the ball.

Those are the internal names (JSON's ``symbols``, the tests); every format prints them
as the structural form prints its named quantities (:mod:`kidym.report.readable`,
:attr:`CompactForm.names`): ``XCPole`` as ``X_C(Pole)``, its second derivative
``XCPole't't`` as ``Ẍ_C(Pole)`` (LaTeX ``\\ddot{X}_{C}\\left(\\mathrm{Pole}\\right)``),
``ωXBody't`` as ``ω̇_x(Body)``, ``ωXBody#λ`` as ``ω_X(Body)`` (capital: the fixed
axes); the model's own names, and their rates, as written (``xC't't``, ``phi1't't``).

This is a view for reading; the engines use the structural form. It is formed on a
graph of its own (the :class:`~kidym.eom.equations.Equations` are not touched) and
given up, with the reason, when it grows past :data:`COMPACT_MAX_OPS` operations or
its time budget.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import symengine as se
import sympy

from kidym.eom.system import SystemGraph
from kidym.kinematics import names as gen
from kidym.report.readable import NameTable, name_table

if TYPE_CHECKING:
    from kidym.eom.equations import Equations

#: Above this many operations (all equations together) the compact form is not printed.
COMPACT_MAX_OPS = 3_000

#: Seconds allowed by default to form and simplify the compact form.
COMPACT_BUDGET = 5.0

#: Models whose structural form needs more named quantities than this are not tried
#: (the biped's 552: its compact form is the expanded form of a 7-link chain).
COMPACT_MAX_NAMED = 300

#: Partial velocities up to this many operations are simplified trigonometrically.
SIMPLIFY_OPS = 80

_AXES = ("X", "Y", "Z")


@dataclass(frozen=True)
class CompactForm:
    r"""The compact equations of a model (or why there are none).

    Attributes
    ----------
    equations : list of sympy.Expr
        ``U_k`` with ``U_k = 0`` the equation of speed ``speeds[k]``; empty when
        ``reason`` is set.
    speeds : list of str
        The independent speeds, in order.
    where : list of tuple of (sympy.Symbol, sympy.Expr)
        Positions named after what they are (``XCPole = x + l/2*sin(theta)``) whose
        second derivatives the equations use.
    accelerations : dict of sympy.Symbol to str
        Every acceleration symbol of the equations and the name it is the second
        (or, for a speed, first) derivative of.
    reason : str
        Why the compact form was given up ("" when it is there).
    names : NameTable or None
        How every symbol of the equations and of ``where`` is printed
        (:mod:`kidym.report.readable`; ``XCPole`` → ``X_C(Pole)``, ``XCPole't't`` →
        ``Ẍ_C(Pole)``), unique within the compact form; ``None`` when given up.
    """

    equations: list[sympy.Expr]
    speeds: list[str]
    where: list[tuple[sympy.Symbol, sympy.Expr]] = field(default_factory=list)
    accelerations: dict[sympy.Symbol, str] = field(default_factory=dict)
    reason: str = ""
    names: NameTable | None = field(default=None, repr=False)

    def symbols(self) -> list[str]:
        """The internal names of every symbol the equations and ``where`` use, sorted."""
        used = {s for u in self.equations for s in u.free_symbols}
        for sym, value in self.where:
            used |= {sym} | value.free_symbols
        return sorted(str(s) for s in used)

    def printed(self, expr) -> sympy.Expr:
        """``expr`` (one of ``equations``, a ``where`` symbol or value) with its symbols
        renamed as :attr:`names` prints them (itself when there are no names)."""
        expr = sympy.sympify(expr)
        if self.names is None:
            return expr
        rename = {s: sympy.Symbol(self.names.text(s.name)) for s in expr.free_symbols
                  if self.names.text(s.name) != s.name}
        return expr.xreplace(rename) if rename else expr


class _TooBigError(Exception):
    pass


class _Former:
    """Forms the compact equations on a fresh :class:`SystemGraph` of the model."""

    def __init__(self, eq: Equations, budget: float, max_ops: int) -> None:
        self.eq = eq
        self.model = eq.model
        self.deadline = time.perf_counter() + budget
        self.max_ops = max_ops
        self.system = SystemGraph(eq.model)
        self.graph = self.system.graph
        # (a constraint's function f is zero on the motion: never written back)
        constraints = {c.name for c in eq.model.constraints}
        self.definitions = [d for d in eq.model.definitions if d.name not in constraints]
        self.keep = {se.Symbol(d.name) for d in self.definitions}
        self.speeds = [sympy.Symbol(str(w)) for w in self.system.speeds]
        self._states = {sympy.Symbol(str(q)) for q in self.system.coordinates}
        self.where: list[tuple[sympy.Symbol, sympy.Expr]] = []
        self.accelerations: dict[sympy.Symbol, str] = {}
        self.roots: list[tuple[sympy.Expr, sympy.Expr, sympy.Expr]] = []
        self.writeback = self._writeback_rules()

    # ---------------------------------------------------------------- expansion
    def _check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise _TooBigError("its time budget ran out")

    def expand(self, expr, graph=None) -> sympy.Expr:
        """``expr`` with every generated name substituted, the model's definitions kept."""
        g = self.graph if graph is None else graph
        expr = se.sympify(expr)
        values: dict[se.Symbol, se.Basic] = {}
        for s in g.needed([expr]):
            if s in self.keep:
                continue
            f = g.formula(s)
            values[s] = f.xreplace(values) if values else f
        out = expr.xreplace(values) if values else expr
        self._check_time()
        return sympy.sympify(out)

    def _writeback_rules(self) -> list[tuple[sympy.Expr, sympy.Expr]]:
        """Pieces of the definitions' formulas written back through the definitions'
        names: ``zC = R − sqrt(S)`` gives ``sqrt(S) → R − zC``; ``a = r/(R − r)``
        gives ``r/(R − r) → a``."""
        rules: list[tuple[sympy.Expr, sympy.Expr]] = []
        for d in reversed(self.definitions):
            name = sympy.Symbol(d.name)
            try:
                named = self.system.lookup(d.name)
                if named in self.graph:
                    named = self.graph.formula(named)
                full = self.expand(named)
            except Exception:   # a definition the graph cannot take
                continue        # is simply not written back
            if full.is_Atom:
                continue
            rules.append((full, name))
            roots = [p for p in full.atoms(sympy.Pow) if not p.exp.is_Integer]
            for p in roots:
                x = sympy.Dummy("x")
                try:
                    sol = sympy.solve(sympy.Eq(name, full.xreplace({p: x})), x)
                except (NotImplementedError, ValueError, TypeError):
                    continue
                if len(sol) == 1 and not sol[0].has(x):
                    rules.append((p, sol[0]))
                    self.roots.append((sympy.expand(p.base), p.exp, sol[0]))
        return rules

    def _roots_back(self, expr: sympy.Expr) -> sympy.Expr:
        """``b^e`` with ``b`` the base of a written-back root ``b^e0`` (expanded or not)
        as that root's name to the power ``e/e0``: ``(S)^(-3/2)`` → ``(R − zC)^(-3)``."""
        subs = {}
        for p in expr.atoms(sympy.Pow):
            if p.exp.is_Integer:
                continue
            base = sympy.expand(p.base)
            for b0, e0, value in self.roots:
                if base == b0:
                    subs[p] = value ** (p.exp / e0)
                    break
        return expr.xreplace(subs) if subs else expr

    def tidy(self, expr: sympy.Expr) -> sympy.Expr:
        """Write the definitions back, then simplify (cheaply; within the budget)."""
        for full, name in self.writeback:
            if expr.has(full):
                expr = expr.xreplace({full: name})
        expr = self._roots_back(expr)
        ops = sympy.count_ops(expr)
        if ops > self.max_ops:
            raise _TooBigError(f"it has more than {self.max_ops} operations")
        if expr.is_Atom:
            out = expr
        elif ops <= SIMPLIFY_OPS and expr.has(sympy.sin, sympy.cos):
            out = sympy.factor_terms(sympy.trigsimp(sympy.cancel(expr)))
        else:
            out = sympy.factor_terms(sympy.cancel(expr))
        for full, name in self.writeback:
            if out.has(full):
                out = out.xreplace({full: name})
        self._check_time()
        return out if sympy.count_ops(out) <= sympy.count_ops(expr) else expr

    def partials(self, rate: sympy.Expr) -> list[sympy.Expr]:
        return [self.tidy(sympy.diff(rate, w)) for w in self.speeds]

    # -------------------------------------------------------------- the pieces
    def _acceleration(self, position: sympy.Expr, label: str) -> sympy.Symbol:
        """Symbol of the second derivative of ``position``, named after it."""
        if isinstance(position, sympy.Symbol):
            name = str(position)
        else:
            name = label
            sym = sympy.Symbol(name)
            if all(s != sym for s, _ in self.where):
                self.where.append((sym, position))
        acc = sympy.Symbol(f"{name}'t't")
        self.accelerations[acc] = name
        return acc

    def body_terms(self, body) -> list[sympy.Expr]:
        n = len(self.speeds)
        terms = [sympy.Integer(0)] * n
        inertia = body.inertia
        m = sympy.sympify(self.expand(self.system.resolve(inertia.mass)))
        gravity = ([self.expand(self.system.resolve(x)) for x in self.model.gravity]
                   if self.model.gravity is not None else [0, 0, 0])
        for axis, gk in zip(_AXES, gravity):
            name = f"{axis}C{body.name}"
            pos_named = self.system.lookup(name)
            pos = self.tidy(self.expand(pos_named))
            if pos.is_number:
                continue
            rate = self.expand(self.graph.dt(pos_named))
            parts = self.partials(rate)
            if all(p == 0 for p in parts):
                continue
            acc = self._acceleration(pos, name)
            for k, p in enumerate(parts):
                if p != 0:
                    terms[k] += m * p * (acc - gk)
        J = sympy.Matrix(sympy.sympify(inertia.tensor()))
        J = J.applyfunc(lambda x: self.expand(self.system.resolve(x)))
        if J.is_zero_matrix:
            return terms
        omega = [self.expand(self.system.lookup(f"{a}{body.name}")) for a in gen.OMEGA]
        isotropic = (not inertia.has_products and inertia.jx == inertia.jy == inertia.jz)
        label = [f"{a}{body.name}" for a in gen.OMEGA]
        if isotropic:
            S = sympy.Matrix(3, 3, [self.expand(self.system.lookup(f"{e}{body.name}"))
                                    for e in gen.ROTATION])
            fixed = [self.tidy(x) for x in S * sympy.Matrix(omega)]
            if all(sympy.count_ops(x) <= 4 for x in fixed):   # the frame where ω is short
                omega = fixed
                label = [f"ω{a}{body.name}#λ" for a in _AXES]   # (readable: ω_X(Body))
        omega = [self.tidy(x) for x in omega]
        eps = []
        for w_i, lab in zip(omega, label):
            combination = self._speed_combination(w_i)
            if combination is not None:
                eps.append(combination)
            elif w_i == 0:
                eps.append(sympy.Integer(0))
            else:
                acc = sympy.Symbol(f"{lab}'t")
                self.accelerations[acc] = lab
                if lab not in {str(s) for s, _ in self.where}:
                    self.where.append((sympy.Symbol(lab), w_i))
                eps.append(acc)
        w_vec = sympy.Matrix(omega)
        moment = J * sympy.Matrix(eps) + w_vec.cross(J * w_vec)
        moment = moment.applyfunc(self.tidy)
        for i, x in enumerate(omega):
            if x == 0:
                continue
            for k, p in enumerate(self.partials(x)):
                if p != 0:
                    terms[k] += p * moment[i]
        return terms

    def _speed_combination(self, omega: sympy.Expr) -> sympy.Expr | None:
        """``Σ c_j ẇ_j`` when ``omega`` is ``Σ c_j w_j`` with constant ``c_j`` (a planar
        joint's ``ωZ = q1't + q2't`` gives ``q1't't + q2't't``), else ``None``."""
        if omega == 0:
            return None
        out = sympy.Integer(0)
        for w in self.speeds:
            c = sympy.diff(omega, w)
            if c.free_symbols & (set(self.speeds) | self._states):
                return None
            if c != 0:
                acc = sympy.Symbol(f"{w}'t")
                self.accelerations[acc] = str(w)
                out += c * acc
        if sympy.expand(omega - sum(sympy.diff(omega, w) * w for w in self.speeds)) != 0:
            return None
        return out

    def element_terms(self) -> list[sympy.Expr]:
        n = len(self.speeds)
        terms = [sympy.Integer(0)] * n
        for el in self.model.elements:
            p_named = self.system.lookup(el.coordinate)
            p = self.expand(p_named)
            differential = any(p.has(w) for w in self.speeds)
            rate = p if differential else self.expand(self.graph.dt(p_named))
            value = self.expand(self.system.resolve(el.characteristic))
            parts = self.partials(rate)
            name = el.coordinate
            if el.kind == "J":
                sym = sympy.Symbol(f"{name}'t" if differential else f"{name}'t't")
                self.accelerations[sym] = name
                factor = value * sym
            elif el.kind == "P":
                factor = -value
            elif el.kind == "C":
                factor = value * (sympy.Symbol(name) if p.is_Symbol or differential
                                  else self.tidy(p))
            else:   # D
                factor = value * (sympy.Symbol(f"{name}'t") if not differential
                                  else self.tidy(p))
            for k, part in enumerate(parts):
                if part != 0:
                    terms[k] += part * factor
        return terms

    def constraint_terms(self) -> list[sympy.Expr]:
        n = len(self.speeds)
        terms = [sympy.Integer(0)] * n
        c = self.eq.constraints
        if c is None:
            return terms
        for lam, row in zip(c.multiplier_names, c.jacobian):
            sym = sympy.Symbol(lam)
            for k, gk in enumerate(row):
                if gk != 0:
                    terms[k] -= self.tidy(self.expand(gk, self.eq.graph)) * sym
        return terms

    def _collected(self, u: sympy.Expr) -> sympy.Expr:
        """``u`` as ``Σ c_a·a + rest`` over its accelerations, each piece simplified."""
        u = self._roots_back(sympy.expand(u))
        accs = [a for a in self.accelerations if u.has(a)]
        out = sympy.Integer(0)
        rest = u
        for a in accs:
            c = rest.coeff(a)
            rest = sympy.expand(rest - c * a)
            out += self.tidy(c) * a
        return out + self.tidy(rest)

    def form(self) -> list[sympy.Expr]:
        n = len(self.speeds)
        total = [sympy.Integer(0)] * n
        pieces = [self.element_terms(), self.constraint_terms()]
        pieces += [self.body_terms(b) for b in self.model.bodies]
        for piece in pieces:
            total = [a + b for a, b in zip(total, piece)]
        out = [self._collected(x) if sympy.count_ops(x) < 600 else x for x in total]
        if sum(sympy.count_ops(x) for x in out) > self.max_ops:
            raise _TooBigError(f"it has more than {self.max_ops} operations")
        return out


def compact_form(eq: Equations, *, budget: float = COMPACT_BUDGET,
                 max_ops: int = COMPACT_MAX_OPS, named: int | None = None) -> CompactForm:
    """The compact equations of ``eq`` (its final stage), or the reason there are none.

    Parameters
    ----------
    eq : Equations
        Derived equations.
    budget : float
        Seconds allowed to form and simplify them.
    max_ops : int
        Larger compact forms are given up (the structural form is the readable one then).
    named : int, optional
        How many named quantities the structural form needs; above
        :data:`COMPACT_MAX_NAMED` the compact form is not tried.

    Returns
    -------
    CompactForm
        ``equations`` empty and ``reason`` set when given up.

    Examples
    --------
    For seed 000's ball the first equation is
    ``J ω̇X − a m ((R − zC) ÿC + yC (z̈C + g))`` (seed 000 eq. (25)).
    """
    speeds = [str(w) for w in eq.speeds]
    if named is not None and named > COMPACT_MAX_NAMED:
        return CompactForm([], speeds, reason=(
            f"the compact form is not printed: the structural form needs {named} named "
            f"quantities (more than {COMPACT_MAX_NAMED}), the compact one would be their "
            "expansion"))
    try:
        former = _Former(eq, budget, max_ops)
        equations = former.form()
    except _TooBigError as exc:
        return CompactForm([], speeds, reason=f"the compact form is not printed: {exc}")
    except Exception as exc:  # a view: never stop the print for it
        return CompactForm([], speeds, reason=f"the compact form is not available for this "
                                              f"model ({type(exc).__name__})")
    cf = CompactForm(equations, speeds, former.where, former.accelerations)
    return dataclasses.replace(cf, names=compact_names(eq, cf))


def compact_names(eq: Equations, cf: CompactForm) -> NameTable:
    """The printed names of the symbols of ``cf`` (:mod:`kidym.report.readable`): the
    *where* names read by their structure and made unique, each acceleration printed as
    the derivative of what it names (``XCPole't't`` → ``Ẍ_C(Pole)``)."""
    accelerations = {str(a) for a in cf.accelerations}
    table = name_table(eq, [*(s for s in cf.symbols() if s not in accelerations),
                            *cf.accelerations.values()])
    for acc, of in cf.accelerations.items():
        rest = str(acc)[len(of):]
        order = len(rest) // 2
        assert str(acc).startswith(of) and rest == "'t" * order, (acc, of)
        table.set_derivative(str(acc), of, order)
    return table
