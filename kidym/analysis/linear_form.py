"""The linearised equations in mechanical form, with the parameters as symbols.

Without ``УРАВНЕНИЯ`` (an ODE in ``y = [q, w]``)::

    δq̇ = Q_q δq + Q_w δw
    M δẇ + C δw + K δq = E δu

With ``УРАВНЕНИЯ`` (and ``КАЧЕНИЕ``, ``СОВПАДЕНИЕ``, which add constraints) the
descriptor form of the augmented equations ``M ẇ = F + Gᵀλ``, ``G ẇ = γ`` about the
point's ``(y, ẇ, λ)``, with the multipliers' increments ``δλ`` as unknowns beside
``δẇ``::

    δq̇ = Q_q δq + Q_w δw
    M δẇ + C δw + K δq − Gᵀ δλ = E δu          (dynamics)
    G δẇ + C_c δw + K_c δq = E_c δu            (acceleration-level constraints)
    Φ_q δq = 0,   c_q δq + c_w δw = 0          (the admissible δy)

with ``K = −∂(F + Gᵀλ − M ẇ)/∂q``, ``C = −∂(F + Gᵀλ − M ẇ)/∂w``,
``E = ∂(F + Gᵀλ − M ẇ)/∂u``, ``K_c = ∂(G ẇ − γ)/∂q``, ``C_c = ∂(G ẇ − γ)/∂w``,
``E_c = −∂(G ẇ − γ)/∂u``; ``Φ_q`` has a row for each holonomic constraint, ``c_q, c_w``
one for each constraint (``c = Φ̇``, or the velocity constraint as written). The
multipliers at the point enter ``K, C, E`` as symbols named like the outputs
(``λf1``), their values listed beside (:attr:`SymbolicLinearization.multipliers`); the
states and the time are replaced by their values at the point (integers and multiples of
π/12 exactly), and so is ``ẇ`` where it is not 0 (a non-stationary point). Solving the
second and third rows for ``[δẇ; δλ]`` and restricting ``δy`` to the constraints gives
the numeric ``A`` of :class:`~kidym.analysis.linearize.Linearization`.

The named quantities are expanded (expressions of the parameters): a view for small
models. Each named quantity is put at the point once and expanded by SymEngine
(:class:`_AtPoint`); the matrices stay SymEngine's until one is asked for as SymPy's
(:class:`SymbolicLinearization`), so the printed text and JSON need no SymPy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import symengine as se

from kidym.model.model import TIME

if TYPE_CHECKING:
    import sympy

    from kidym.analysis.derivatives import StateDerivatives

#: The equations of the form, as text, without and with constraints.
FORM = ("δq̇ = Q_q δq + Q_w δw", "M δẇ + C δw + K δq = E δu")
FORM_CONSTRAINED = ("δq̇ = Q_q δq + Q_w δw", "M δẇ + C δw + K δq − Gᵀ δλ = E δu",
                    "G δẇ + C_c δw + K_c δq = E_c δu", "Φ_q δq = 0",
                    "c_q δq + c_w δw = 0")

_LATEX_MATRIX = {"Q_q": "Q_q", "Q_w": "Q_w", "M": "M", "C": "C", "K": "K", "E": "E",
                 "G": "G", "C_c": "C_c", "K_c": "K_c", "E_c": "E_c",
                 "Phi_q": "\\Phi_q", "c_q": "c_q", "c_w": "c_w"}


@dataclass(frozen=True)
class SymbolicLinearization(Mapping):
    """The linearised equations in mechanical form (see the module docstring); a mapping
    from the matrix names ``"M"``, ``"K"``, ``"C"``, ``"Q_q"``, ``"Q_w"`` (``"E"`` with
    inputs; ``"G"``, ``"K_c"``, ``"C_c"``, ``"Phi_q"``, ``"c_q"``, ``"c_w"``, ``"E_c"``
    with constraints) to SymPy matrices.

    The entries are held as SymEngine expressions (:attr:`entries`); a matrix is
    converted to SymPy when it is asked for (``form["K"]``, :attr:`matrices`,
    :meth:`to_latex`), once. The text and JSON outputs print the entries directly.

    Attributes
    ----------
    entries : dict of str to tuple of tuple of symengine.Basic
        Each matrix's entries, row by row.
    matrices : dict of str to sympy.Matrix
        All matrices, in SymPy.
    rows, columns : dict of str to tuple of str
        The names along each matrix's rows (the speed whose equation it is, a
        coordinate, a constraint) and columns (a coordinate, a speed, an input).
    equations : tuple of str
        The equations of the form, as text.
    t : float
        Time of the point.
    point : dict of str to float
        The states at the point.
    multipliers : dict of str to float
        ``λ`` at the point: the symbols in ``K``, ``C``, ``E`` and their values.
    wdot : dict of str to float
        ``ẇ`` at the point (its values are in ``K`` where not 0).
    """

    entries: dict
    rows: dict
    columns: dict
    equations: tuple[str, ...]
    t: float
    point: dict
    multipliers: dict
    wdot: dict
    _sympy: dict = field(default_factory=dict, repr=False, compare=False)

    def __getitem__(self, key: str) -> sympy.Matrix:
        if key not in self._sympy:
            import sympy

            rows = self.entries[key]
            self._sympy[key] = sympy.Matrix(len(self.rows[key]), len(self.columns[key]),
                                            [_to_sympy(e) for row in rows for e in row])
        return self._sympy[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def matrices(self) -> dict:
        """All matrices as SymPy matrices (converted on first use)."""
        return {k: self[k] for k in self.entries}

    @property
    def constrained(self) -> bool:
        """Whether this is the descriptor form of a model with constraints."""
        return "G" in self.entries

    # ----------------------------------------------------------------- output
    def to_dict(self) -> dict:
        """JSON-ready: the equations, the point, and each matrix as its row and column
        names and its entries (the text of each expression, which SymPy's ``sympify``
        reads back as the same expression)."""
        return {"equations": list(self.equations), "t": self.t, "point": self.point,
                "multipliers": self.multipliers, "wdot": self.wdot,
                "matrices": {k: {"rows": list(self.rows[k]),
                                 "columns": list(self.columns[k]),
                                 "entries": [[str(v) for v in row] for row in rows]}
                             for k, rows in self.entries.items()}}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)

    def _header(self) -> list[str]:
        out = [f"at t = {self.t:g}: "
               + ", ".join(f"{k} = {v:.6g}" for k, v in self.point.items())]
        if self.multipliers:
            out.append("multipliers at the point: " + ", ".join(
                f"{k} = {v:.6g}" for k, v in self.multipliers.items()))
        if any(v != 0 for v in self.wdot.values()):
            out.append("ẇ at the point (in K, C, E): " + ", ".join(
                f"{k} = {v:.6g}" for k, v in self.wdot.items()))
        return out

    def to_text(self) -> str:
        """The equations and the non-zero entries of each matrix, by row and column
        name, as plain text."""
        lines = ["linearised equations (parameters as symbols):"]
        lines += ["  " + e for e in self.equations]
        lines += self._header()
        for k, m in self.entries.items():
            entries = [f"  {k}[{r}, {c}] = {m[i][j]}"
                       for i, r in enumerate(self.rows[k])
                       for j, c in enumerate(self.columns[k]) if m[i][j] != 0]
            shape = f"{len(self.rows[k])}×{len(self.columns[k])}"
            lines.append(f"{k} ({shape}):" if entries else f"{k} ({shape}) = 0")
            lines += entries
        return "\n".join(lines)

    def to_latex(self) -> str:
        """The equations, the vectors and each matrix, one display line each (LaTeX)."""
        import sympy

        from kidym.report.names import latex_name

        states = tuple(self.point)
        names: dict = {}

        def tex(e) -> str:
            for s in e.free_symbols:
                names.setdefault(s, latex_name(s.name, states))
            return sympy.latex(e, symbol_names=names)

        def vec(items) -> str:
            return ("\\begin{pmatrix}" + " \\\\ ".join(latex_name(s, states) for s in items)
                    + "\\end{pmatrix}")

        if self.constrained:
            eqs = ["\\delta\\dot{q} = Q_q\\,\\delta q + Q_w\\,\\delta w",
                   "M\\,\\delta\\dot{w} + C\\,\\delta w + K\\,\\delta q - G^{\\mathsf{T}}"
                   "\\,\\delta\\lambda = E\\,\\delta u",
                   "G\\,\\delta\\dot{w} + C_c\\,\\delta w + K_c\\,\\delta q = E_c\\,\\delta u",
                   "\\Phi_q\\,\\delta q = 0", "c_q\\,\\delta q + c_w\\,\\delta w = 0"]
        else:
            eqs = ["\\delta\\dot{q} = Q_q\\,\\delta q + Q_w\\,\\delta w",
                   "M\\,\\delta\\dot{w} + C\\,\\delta w + K\\,\\delta q = E\\,\\delta u"]
        if "E" not in self.entries:
            eqs = [e.replace(" = E\\,\\delta u", " = 0").replace(" = E_c\\,\\delta u", " = 0")
                   for e in eqs]
        lines = [",\\quad ".join(eqs)]
        vecs = [f"q = {vec(self.columns['K'])}", f"w = {vec(self.columns['C'])}"]
        if self.constrained:
            vecs.append(f"\\lambda = {vec(self.multipliers)}")
        if "E" in self.entries:
            vecs.append(f"u = {vec(self.columns['E'])}")
        lines.append(",\\quad ".join(vecs))
        for k, m in self.matrices.items():
            if m.rows == 0 or m.cols == 0:
                continue
            body = " \\\\ ".join(" & ".join(tex(m[i, j]) for j in range(m.cols))
                                 for i in range(m.rows))
            lines.append(f"{_LATEX_MATRIX[k]} = \\begin{{pmatrix}}{body}\\end{{pmatrix}}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def exact(v: float) -> se.Basic:
    """``v`` as an exact number where it is an integer or a multiple of π/12 (so that
    ``cos`` of an equilibrium angle is exact in the symbolic form), else a float."""
    v = float(v)
    if v.is_integer():
        return se.Integer(int(v))
    k = v / (np.pi / 12)
    if abs(k - round(k)) < 1e-12 * max(1.0, abs(k)):
        return se.pi * se.Rational(round(k), 12)
    return se.RealDouble(v)


class _AtPoint:
    """Named quantities and expressions at the point, in the parameters.

    Each named quantity's formula gets the states' and time's values and the values of
    the names it uses, once, in dependency order, and is expanded by SymEngine: a
    polynomial (or rational function) of the parameters with the numbers of the point
    collapsed. An entry of a matrix is then its own formula with its few names put in —
    instead of substituting every named quantity into every entry first (the swollen
    form, repeated per entry) and parsing it back into SymPy from text.
    """

    def __init__(self, graph, at: dict) -> None:
        self.graph = graph
        self.values: dict = dict(at)

    def settle(self, exprs: list) -> None:
        """Give a value to every named quantity that ``exprs`` need."""
        graph, values = self.graph, self.values
        for s in graph.needed(exprs):
            if s not in values:
                values[s] = self(graph.formula(s))

    def __call__(self, e: se.Basic) -> se.Basic:
        """``e`` at the point (its names settled before), expanded."""
        e = se.sympify(e)
        values = self.values
        rep = {s: values[s] for s in e.free_symbols if s in values}
        return se.expand(e.xreplace(rep)) if rep else se.expand(e)


def _to_sympy(e: se.Basic) -> sympy.Expr:
    """``e`` as a SymPy expression, its floating-point numbers as printed (15 significant
    digits), so that the printed entries read back as the same expressions."""
    import sympy

    out = sympy.sympify(e)
    floats = out.atoms(sympy.Float)
    return out.xreplace({f: sympy.Float(str(f)) for f in floats}) if floats else out


def symbolic_form(der: StateDerivatives, t: float, y: np.ndarray, wdot: np.ndarray,
                  lam: np.ndarray) -> SymbolicLinearization:
    """The mechanical (descriptor, with constraints) form at ``(t, y)`` with ``ẇ`` and
    ``λ`` the point's (see the module docstring).

    Formed in SymEngine (:class:`_AtPoint`); a matrix is converted to SymPy when it is
    asked for, object to object (no text parsed).
    """
    eq = der.equations
    n_q, n_w, m = eq.n_q, eq.n_w, eq.m
    n_up = n_w * (n_w + 1) // 2
    coords = [str(s) for s in eq.coordinates]
    speeds = [str(s) for s in eq.speeds]
    at = {s: exact(v) for s, v in zip((*eq.coordinates, *eq.speeds), y)}
    at[TIME] = exact(t)

    def m_index(i: int, j: int) -> int:
        i, j = min(i, j), max(i, j)
        return n_q + i * n_w - i * (i - 1) // 2 + (j - i)

    f0 = n_q + n_up                      # F, then γ, Φ, c, G (forcing_extended)
    gamma0, phi0, c0, g0 = f0 + n_w, f0 + n_w + m, f0 + n_w + 2 * m, f0 + n_w + 3 * m
    names = eq.constraints.names if m else ()
    lam_sym = ([se.Symbol(s) for s in eq.constraints.multiplier_names] if m else [])
    moving = [j for j in range(n_w) if wdot[j] != 0]
    wd = {j: exact(wdot[j]) for j in moving}

    def d(root: int, base) -> se.Basic:
        return der.expression(root, base)

    def rate_terms(root_of, base) -> se.Basic:
        """``Σ_j ∂root(j)/∂base · ẇ_j`` over the ``j`` with ``ẇ_j ≠ 0``."""
        return se.Add(*[d(root_of(j), base) * wd[j] for j in moving])

    def dyn(i: int, base) -> se.Basic:           # ∂(F + Gᵀλ − M ẇ)_i / ∂base
        return se.Add(d(f0 + i, base), -rate_terms(lambda j: m_index(i, j), base),
                      *[lam_sym[k] * d(g0 + k * n_w + i, base) for k in range(m)])

    def acc(k: int, base) -> se.Basic:           # ∂(G ẇ − γ)_k / ∂base
        return rate_terms(lambda j: g0 + k * n_w + j, base) - d(gamma0 + k, base)

    bq = list(range(n_q))
    bw = list(range(n_q, n_q + n_w))
    bu = [f"u{j}" for j in range(len(der.inputs))]
    # (entries as a function of (row, column), row names, column names)
    forms: dict = {
        "Q_q": ((n_q, n_q, lambda i, k: d(i, bq[k])), coords, coords),
        "Q_w": ((n_q, n_w, lambda i, k: d(i, bw[k])), coords, speeds),
        "M": ((n_w, n_w, lambda i, j: eq.mass_matrix_named[i][j]), speeds, speeds),
        "C": ((n_w, n_w, lambda i, k: -dyn(i, bw[k])), speeds, speeds),
        "K": ((n_w, n_q, lambda i, k: -dyn(i, bq[k])), speeds, coords),
    }
    if bu:
        forms["E"] = ((n_w, len(bu), lambda i, j: dyn(i, bu[j])), speeds, der.inputs)
    if m:
        hol = [k for k in range(m) if eq.constraints.holonomic[k]]
        cons = list(names)
        forms["G"] = ((m, n_w, lambda k, j: eq.constraints.jacobian[k][j]), cons, speeds)
        forms["C_c"] = ((m, n_w, lambda k, j: acc(k, bw[j])), cons, speeds)
        forms["K_c"] = ((m, n_q, lambda k, j: acc(k, bq[j])), cons, coords)
        if bu:
            forms["E_c"] = ((m, len(bu), lambda k, j: -acc(k, bu[j])), cons, der.inputs)
        forms["Phi_q"] = ((len(hol), n_q, lambda r, j: d(phi0 + hol[r], bq[j])),
                          [names[k] for k in hol], coords)
        forms["c_q"] = ((m, n_q, lambda k, j: d(c0 + k, bq[j])), cons, coords)
        forms["c_w"] = ((m, n_w, lambda k, j: d(c0 + k, bw[j])), cons, speeds)
    entries = {k: [[se.sympify(f(i, j)) for j in range(cols)] for i in range(rows)]
               for k, ((rows, cols, f), _r, _c) in forms.items()}
    point = _AtPoint(eq.graph, at)
    point.settle([e for rows in entries.values() for row in rows for e in row])
    form = FORM_CONSTRAINED if m else FORM
    if not bu:
        form = tuple(e.replace(" = E δu", " = 0").replace(" = E_c δu", " = 0")
                     for e in form)
    return SymbolicLinearization(
        entries={k: tuple(tuple(point(e) for e in row) for row in rows)
                 for k, rows in entries.items()},
        rows={k: tuple(v[1]) for k, v in forms.items()},
        columns={k: tuple(v[2]) for k, v in forms.items()},
        equations=form, t=float(t),
        point=dict(zip(coords + speeds, map(float, y))),
        multipliers=dict(zip(eq.constraints.multiplier_names, map(float, lam))) if m else {},
        wdot=dict(zip(speeds, map(float, wdot))))
