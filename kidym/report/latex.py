"""Equations as LaTeX (a document that ``pdflatex`` compiles) and as Markdown.

The same :class:`~kidym.report.equations.EquationSet` as the text form, typeset:
names by :func:`kidym.report.names.latex_name` (``phi1't`` → ``\\dot{\\varphi}_{1}``,
``vXRod2'phi1't`` → ``\\partial_{\\dot\\varphi_1}\\mathrm{vXRod2}``), expressions by
SymPy's LaTeX printer. Long sums are broken over lines inside ``aligned``, which
both ``amsmath`` and KaTeX know. A model with Cyrillic names needs the T2A fonts
(Debian ``texlive-lang-cyrillic``); the preamble loads them only then.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import sympy

from kidym.report.equations import (
    EquationSet,
    Relation,
    accelerations,
    compact_legend,
    equation_set,
    size_summary,
)
from kidym.report.markdown import markdown_text
from kidym.report.names import has_cyrillic, latex_name
from kidym.report.readable import NameTable, latex_text

if TYPE_CHECKING:   # (Equations' Jupyter view calls this module)
    from kidym.eom.equations import Equations

#: A display line is broken when it grows past about this many printed characters.
LINE_CHARS = 75

_SILENT = re.compile(r"\\(?:mathrm|text|left|right|Big|quad|frac)(?![A-Za-z])")
_COMMAND = re.compile(r"\\[A-Za-z]+")


def width(tex: str) -> int:
    """Rough printed width of a LaTeX fragment (a command is one character wide)."""
    return len(re.sub(r"[{}^_ &]", "", _COMMAND.sub("x", _SILENT.sub("", tex))))


class LatexPrinter:
    """Typesets expressions of one :class:`EquationSet` (names mapped once): its named
    quantities by ``es.names``, or by ``names`` when given (the compact form's,
    :attr:`~kidym.report.compact.CompactForm.names`)."""

    def __init__(self, es: EquationSet, names: NameTable | None = None) -> None:
        self.states = es.state_names()
        self.names = es.names if names is None else names
        self._names: dict[sympy.Symbol, str] = {}

    def name(self, sym) -> str:
        """LaTeX of a symbol."""
        return self._latex(str(sym))

    def _latex(self, name: str) -> str:
        if self.names is not None and self.names.has(name):   # a_x(Rod2)^{(1)}
            return self.names.latex(name)
        return latex_name(name, self.states)

    def expr(self, expr) -> str:
        """LaTeX of an expression (one line)."""
        e = sympy.sympify(expr)
        for s in e.free_symbols:
            if s not in self._names:
                self._names[s] = self._latex(s.name)
        return sympy.latex(e, symbol_names=self._names, mul_symbol="dot")

    def chunks(self, expr) -> list[str]:
        """LaTeX of an expression, a sum cut into pieces of about ``LINE_CHARS``."""
        e = sympy.sympify(expr)
        if not isinstance(e, sympy.Add) or width(self.expr(e)) <= LINE_CHARS:
            return [self.expr(e)]
        terms = []
        for term in sympy.Add.make_args(e):
            tex = self.expr(term)
            terms.append(tex if tex.startswith("-") else "+ " + tex)
        out = _group(terms)
        if out[0].startswith("+ "):
            out[0] = out[0][2:]
        return out

    def motion_pieces(self, eq, i: int) -> list[str]:
        """``Σ_j M_ij ẇ_j − F_i`` term by term, in the order of the speeds."""
        pieces: list[str] = []
        rows = [(eq.mass_matrix_named[i][j], acc) for j, acc in enumerate(accelerations(eq))]
        rows.append((-eq.forcing_named[i], None))
        for coef, acc in rows:
            c = sympy.sympify(coef)
            if c == 0:
                continue
            tail = "" if acc is None else " " + self.name(acc)
            if acc is not None and c == 1:
                pieces.append("+ " + self.name(acc))
                continue
            if acc is None and not isinstance(c, sympy.Add):
                tex = self.expr(c)
                pieces.append(tex if tex.startswith("-") else "+ " + tex)
                continue
            sign = "+ "
            if acc is None:
                sign, c = "- ", -c
            if self.expr(c).startswith("-") and not self.expr(-c).startswith("-"):
                # `+ \left(- a - b\right) ẅ` is written `- \left(a + b\right) ẅ`
                sign, c = ("- " if sign == "+ " else "+ "), -c
            sub = self.chunks(c)
            if not isinstance(c, sympy.Add):
                pieces.append(sign + sub[0] + (r" \cdot" + tail if tail else ""))
            elif len(sub) == 1:
                pieces.append(sign + r"\left(" + sub[0] + r"\right)" + tail)
            else:
                pieces += [sign + r"\Big(" + sub[0], *sub[1:-1], sub[-1] + r"\Big)" + tail]
        if not pieces:
            return ["0"]
        if pieces[0].startswith("+ "):
            pieces[0] = pieces[0][2:]
        return _group(pieces)

    def relation(self, lhs: str, rhs_expr) -> str:
        """``lhs = rhs`` as an ``aligned`` block when it needs several lines."""
        return _aligned(lhs + " =", self.chunks(rhs_expr), "")

    def equation(self, lhs_expr, rhs: str = "0") -> str:
        """``lhs = 0`` for a long ``lhs``."""
        return _aligned("", self.chunks(lhs_expr), f" = {rhs}")


def _group(pieces: list[str]) -> list[str]:
    lines: list[str] = []
    current = ""
    for piece in pieces:
        if current and width(current) + width(piece) > LINE_CHARS:
            lines.append(current)
            current = ""
        current += (" " if current else "") + piece
    lines.append(current)
    return lines


def _aligned(head: str, parts: list[str], tail: str) -> str:
    if len(parts) == 1:
        return f"{head} {parts[0]}{tail}".strip()
    body = f"{head} & {parts[0]}" + "".join(rf" \\ &\quad {q}" for q in parts[1:]) + tail
    return rf"\begin{{aligned}}{body}\end{{aligned}}"


#: the title of the compact form's legend (the report folds it)
COMPACT_LEGEND_TITLE = "How the names of the compact form read"


def compact_sections(es: EquationSet) -> list[tuple[str, list[str]]]:
    r"""The compact form (seed 000 eq. (25)) as a section, its *where* as another, and
    the legend of its printed names (``\ddot{X}_{C}(Pole)``, as the structural form
    prints ``XOCPole``)."""
    cf = es.compact
    if cf is None or cf.reason:
        return []
    p = LatexPrinter(es, cf.names)
    out = [("Equations of motion, compact form (as seed 000 eq. (25))",
            [p.equation(u) for u in cf.equations])]
    if cf.where:
        out.append(("where", [p.relation(p.name(s), v) for s, v in cf.where]))
    legend = compact_legend(cf)
    if legend:
        out.append((COMPACT_LEGEND_TITLE, [rf"{key} \quad \text{{{latex_text(meaning)}}}"
                                           for _, key, meaning in legend]))
    return out


def _mlabel(r: Relation, es: EquationSet, p: LatexPrinter) -> str:
    i, j = (int(k) for k in r.label.split(","))
    return rf"M_{{{p.name(es.equations.speeds[i])},\,{p.name(es.equations.speeds[j])}}}"


def sections(es: EquationSet) -> list[tuple[str, list[str]]]:
    """The displays of each section, as ``(title, [LaTeX math, …])``."""
    p = LatexPrinter(es)
    eq = es.equations
    out: list[tuple[str, list[str]]] = []
    out.append(("Kinematic equations $\\dot q = B w + \\beta$",
                [p.relation(rf"\frac{{d}}{{dt}}{p.name(r.label)}", r.rhs)
                 for r in es.kinematic]))
    out.extend(compact_sections(es))
    if es.motion:
        out.append(("Equations of motion, one per independent speed",
                    [_aligned("", p.motion_pieces(eq, i), " = 0")
                     for i in range(len(es.motion))]))
    if es.mass_matrix:
        out.append((f"Mass matrix $M$ (symmetric, ${eq.n_w}\\times{eq.n_w}$), upper triangle",
                    [p.relation(_mlabel(r, es, p), r.rhs) for r in es.mass_matrix]))
    if es.forcing:
        out.append(("Forcing $F$ ($M\\dot w = F$)",
                    [p.relation(rf"F_{{{p.name(w)}}}", r.rhs)
                     for w, r in zip(eq.speeds, es.forcing)]))
    out.append((f"Named quantities ({len(es.intermediates)}, in evaluation order)",
                [p.relation(p.name(r.lhs), r.rhs) for r in es.intermediates]))
    if es.names is not None and es.intermediates:
        legend = es.names.legend(str(r.lhs) for r in es.intermediates)
        if legend:
            out.append((LEGEND_TITLE, [rf"{key} \quad \text{{{latex_text(meaning)}}}"
                                       for _, key, meaning in legend]))
    if es.expanded:
        exp = []
        for r in es.expanded:
            lhs = str(r.lhs)
            if lhs.startswith("U["):
                exp.append(p.equation(r.rhs))
            elif lhs.startswith("M["):
                a, b = lhs[2:-1].split(", ")
                exp.append(p.relation(rf"M_{{{latex_name(a, p.states)},\,"
                                      rf"{latex_name(b, p.states)}}}", r.rhs))
            elif lhs.startswith("F["):
                exp.append(p.relation(rf"F_{{{latex_name(lhs[2:-1], p.states)}}}", r.rhs))
            else:
                exp.append(p.relation(p.name(r.lhs), r.rhs))
        out.append(("Expanded form (every named quantity substituted)", exp))
    return out


#: the title of the legend's section (the report folds it with the named quantities)
LEGEND_TITLE = "How the names of the named quantities read"

_TITLES = {"final": "Equations of motion", "holonomic": "Holonomic stage $U_{hol}$",
           "cauchy": "Cauchy form"}


def _escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"),
                 ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\~{}")):
        text = text.replace(a, b)
    return text


def latex_document(es: EquationSet) -> str:
    """A complete LaTeX document (``pdflatex``; ``amsmath``) of the equations."""
    eq = es.equations
    cyr = has_cyrillic(eq.model.name) or any(
        has_cyrillic(str(s)) for s in (*eq.coordinates, *eq.speeds, *eq.parameters,
                                       *(r.lhs for r in es.intermediates)))
    pre = [r"\documentclass[10pt]{article}",
           r"\usepackage[utf8]{inputenc}"]
    if cyr:
        pre.append(r"\usepackage[T2A,T1]{fontenc}")
    pre += [r"\usepackage{amsmath}", r"\usepackage[margin=2cm]{geometry}",
            r"\allowdisplaybreaks", r"\begin{document}",
            rf"\section*{{{_escape(eq.model.name)}: {_TITLES[es.stage]}}}"]
    p = LatexPrinter(es)
    pre.append(f"Coordinates $q = ({', '.join(p.name(q) for q in eq.coordinates)})$, "
               f"speeds $w = ({', '.join(p.name(w) for w in eq.speeds)})$. "
               f"{_escape(_size_sentence(es))}")
    body = []
    for title, displays in sections(es):
        body.append(rf"\subsection*{{{title}}}")
        for d in displays:
            body.append(r"\[" + d + r"\]")
    for w in es.warnings:
        body.append(r"\paragraph{Warning.} " + _escape(w))
    return "\n".join([*pre, *body, r"\end{document}"]) + "\n"


def _size_sentence(es: EquationSet) -> str:
    return f"Size: {size_summary(es)}."


def to_latex(eq: Equations, *, stage: str = "final", expanded: bool = False,
             simplify_budget: float = 10.0) -> str:
    """The equations as a LaTeX document (see :func:`latex_document`)."""
    return latex_document(equation_set(eq, stage=stage, expanded=expanded,
                                       simplify_budget=simplify_budget))


def markdown_of(es: EquationSet, *, level: int = 1) -> str:
    """The equations as Markdown with ``$$ … $$`` math (GitHub, Jupyter, pandoc)."""
    eq = es.equations
    h = "#" * level
    p = LatexPrinter(es)
    out = [f"{h} {markdown_text(eq.model.name)}: {_TITLES[es.stage]}", "",
           f"Coordinates ${', '.join(p.name(q) for q in eq.coordinates)}$; speeds "
           f"${', '.join(p.name(w) for w in eq.speeds)}$. {_size_sentence(es)}", ""]
    for title, displays in sections(es):
        out += [f"{h}# {title}", ""]
        for d in displays:
            out += ["$$", d, "$$", ""]
    for w in es.warnings:
        out += [f"> **Warning.** {w}", ""]
    return "\n".join(out)


def repr_latex(eq: Equations) -> str:
    """Jupyter's LaTeX view of equations: the per-speed equations of motion."""
    es = equation_set(eq, stage="final")
    p = LatexPrinter(es)
    if es.compact is not None and not es.compact.reason:
        c = LatexPrinter(es, es.compact.names)   # (its names: Ẍ_C(Pole) …)
        rows = [c.expr(u) + " &= 0" for u in es.compact.equations]
        rows += [c.name(s) + " &= " + c.expr(v) for s, v in es.compact.where]
    else:
        rows = [" ".join(p.motion_pieces(es.equations, i)) + " &= 0"
                for i in range(len(es.motion))]
    return r"$$\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}$$"
