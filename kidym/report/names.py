"""Model names as LaTeX: ``phi1't`` → ``\\dot{\\varphi}_{1}``, ``ωXКуля`` → ``\\omega_{…}``.

KiDyM names carry their meaning in their spelling (``docs/guide.md`` §3): a trailing
``'t`` is a time derivative, ``X'w`` the partial derivative of ``X`` by the state
symbol ``w``, ``S21Body`` an entry of a rotation matrix. This module turns such a
name into LaTeX that both ``pdflatex`` (with ``amsmath``) and KaTeX typeset:

* a name made of a Greek word or one letter and digits (``phi1``, ``m2``, ``l``)
  is written as a mathematician would: ``\\varphi_{1}``, ``m_{2}``, ``l``;
* any other name is kept whole and upright, Greek letters as math symbols and
  Cyrillic runs inside ``\\text{…}`` (``\\mathrm{vXRod2}``, ``\\Omega\\mathrm{ZRod1}``);
* ``'t`` suffixes become dots (at most two, then ``^{(k)}``); a partial derivative
  by a state symbol ``w`` is written ``\\partial_{w}X``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

GREEK_WORDS = {
    "alpha": r"\alpha", "beta": r"\beta", "gamma": r"\gamma", "delta": r"\delta",
    "epsilon": r"\varepsilon", "eps": r"\varepsilon", "zeta": r"\zeta", "eta": r"\eta",
    "theta": r"\theta", "teta": r"\theta", "iota": r"\iota", "kappa": r"\kappa",
    "lambda": r"\lambda", "mu": r"\mu", "nu": r"\nu", "xi": r"\xi", "pi": r"\pi",
    "rho": r"\rho", "sigma": r"\sigma", "tau": r"\tau", "upsilon": r"\upsilon",
    "phi": r"\varphi", "chi": r"\chi", "psi": r"\psi", "omega": r"\omega",
    "Gamma": r"\Gamma", "Delta": r"\Delta", "Theta": r"\Theta", "Lambda": r"\Lambda",
    "Xi": r"\Xi", "Pi": r"\Pi", "Sigma": r"\Sigma", "Phi": r"\Phi", "Psi": r"\Psi",
    "Omega": r"\Omega",
}

GREEK_CHARS = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon",
    "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ι": r"\iota", "κ": r"\kappa",
    "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho",
    "σ": r"\sigma", "τ": r"\tau", "υ": r"\upsilon", "φ": r"\varphi", "ϕ": r"\phi",
    "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta",
    "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi", "Π": r"\Pi", "Σ": r"\Sigma",
    "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
}

_SIMPLE = re.compile(r"^([A-Za-z]+|[α-ωΑ-Ωϕ])(\d*)$")
#: ``xC``, ``yC``, ``vMax``: one lowercase letter and a capitalised tail, written
#: ``x_{C}`` as the papers write the mass centre's coordinates (the accent on ``x``)
_POINT = re.compile(r"^([a-z])([A-Z][A-Za-z0-9]*)$")
_ESCAPE = {"#": r"\#", "_": r"\_", "~": r"\sim ", "&": r"\&", "%": r"\%", "$": r"\$",
           "@": "@", "^": r"\hat{}", "{": r"\{", "}": r"\}", "\\": r"\backslash "}


def _is_cyrillic(ch: str) -> bool:
    return "\u0400" <= ch <= "\u04ff"


def has_cyrillic(text: str) -> bool:
    """Whether ``text`` holds a Cyrillic letter (LaTeX then needs T2A fonts)."""
    return any(_is_cyrillic(c) for c in text)


def _word(name: str) -> str:
    """An identifier without derivative marks, as LaTeX."""
    if not name:
        return ""
    m = _POINT.match(name)
    if m:
        head, tail = m.groups()
        sub = tail if len(tail) == 1 else rf"\mathrm{{{tail}}}"
        return f"{head}_{{{sub}}}"
    m = _SIMPLE.match(name)
    if m:
        head, digits = m.groups()
        if head in GREEK_WORDS:
            head = GREEK_WORDS[head]
        elif head in GREEK_CHARS:
            head = GREEK_CHARS[head]
        elif len(head) > 1:
            return rf"\mathrm{{{name}}}"
        return f"{head}_{{{digits}}}" if digits else head
    if name[0] in GREEK_CHARS and len(name) > 1:
        return f"{GREEK_CHARS[name[0]]}_{{{_word(name[1:])}}}"
    out: list[str] = []
    run = ""
    kind = ""

    def flush() -> None:
        nonlocal run, kind
        if run:
            out.append(rf"\text{{{run}}}" if kind == "cyr" else rf"\mathrm{{{run}}}")
        run, kind = "", ""

    for ch in name:
        if ch in GREEK_CHARS:
            flush()
            out.append(GREEK_CHARS[ch] + " ")
        elif ch in _ESCAPE:
            flush()
            out.append(_ESCAPE[ch])
        else:
            k = "cyr" if _is_cyrillic(ch) else "lat"
            if kind and k != kind:
                flush()
            run += ch
            kind = k
    flush()
    return "".join(out).strip()


_SUBSCRIPTED = re.compile(r"^(\\?[A-Za-z]+)(_\{.*\})$")


def _dots(body: str, n: int) -> str:
    if n == 0:
        return body
    m = _SUBSCRIPTED.match(body)
    if m and n <= 2:
        return _dots(m.group(1), n) + m.group(2)
    if n == 1:
        return rf"\dot{{{body}}}"
    if n == 2:
        return rf"\ddot{{{body}}}"
    return rf"{{{body}}}^{{({n})}}"


def latex_name(name: str, states: Iterable[str] = ()) -> str:
    """LaTeX for a model or generated name.

    Parameters
    ----------
    name : str
        The name as printed in text (``vXRod2'phi1't``).
    states : iterable of str
        Names of the state symbols (coordinates and speeds): a suffix ``'w`` with
        ``w`` one of them is a partial derivative by ``w``.

    Examples
    --------
    ``phi1't`` → ``\\dot{\\varphi}_{1}``; with ``phi1't`` a state,
    ``vXRod2'phi1't`` → ``\\partial_{\\dot{\\varphi}_{1}}\\mathrm{vXRod2}``.
    """
    states = sorted(set(states), key=len, reverse=True)
    for w in states:
        suffix = "'" + w
        if name.endswith(suffix) and len(name) > len(suffix):
            inner = latex_name(name[: -len(suffix)], states)
            return rf"{{\partial_{{{latex_name(w)}}}{inner}}}"
    n = 0
    base = name
    while base.endswith("'t") and len(base) > 2:
        base = base[:-2]
        n += 1
    if "'" in base:  # a partial by something that is not a state: keep it readable
        head, _, tail = base.rpartition("'")
        return _dots(rf"\partial_{{{latex_name(tail)}}}{latex_name(head)}", n)
    body = _word(base)
    return _dots(body, n)
