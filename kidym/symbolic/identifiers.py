"""Deterministic safe identifiers for any model name (Cyrillic, Greek, ``x't``…).

Generated code (Python, C) and machine-readable output (JSON) need plain ASCII
identifiers; the original names travel alongside, in comments or tables.
"""

from __future__ import annotations

import keyword
import re
import unicodedata

from sympy.abc import _clash  # names sympify would read as SymPy objects (S, E, gamma…)

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu",
    "ν": "nu", "ξ": "xi", "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma",
    "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
    "Ω": "Omega", "Δ": "Delta", "Φ": "Phi", "Ψ": "Psi", "Λ": "Lambda", "Θ": "Theta",
    "Σ": "Sigma", "Γ": "Gamma", "Π": "Pi",
}
_CYRILLIC = dict(zip(
    "абвгґдеёєжзиіїйклмнопрстуфхцчшщъыьэюя",
    ["a", "b", "v", "g", "g", "d", "e", "yo", "ye", "zh", "z", "i", "i", "yi", "y", "k", "l",
     "m", "n", "o", "p", "r", "s", "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "",
     "e", "yu", "ya"]))
_PUNCT = {"'": "_d", "#": "_n", "~": "_v", "@": "_at_", "$": "_s", ".": "_"}

#: Names a generated identifier must never take (C and Python keywords, libm).
RESERVED = frozenset(keyword.kwlist) | {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
    "void", "volatile", "while", "inline", "restrict", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "asinh", "fabs", "floor",
    "ceil", "pow", "y", "p", "out", "ydot", "M", "F", "np", "math", "pi", "E",
} | frozenset(_clash)


def _letter(ch: str) -> str:
    if ch.isascii():
        return ch if (ch.isalnum() or ch == "_") else _PUNCT.get(ch, "_")
    if ch in _GREEK:
        return _GREEK[ch]
    low = ch.lower()
    if low in _CYRILLIC:
        out = _CYRILLIC[low]
        return out.capitalize() if ch != low else out
    name = unicodedata.name(ch, "")
    return f"u{ord(ch):04x}" if not name else re.sub(r"\W", "_", name.split()[-1].lower())


def identifier(name: str) -> str:
    """A readable ASCII identifier for ``name`` (not yet made unique)."""
    out = "".join(_letter(ch) for ch in name)
    out = re.sub(r"_+", "_", out).strip("_") or "v"
    if out[0].isdigit():
        out = "v" + out
    return out


class IdentifierMap:
    """Assigns unique identifiers to names, deterministically in call order."""

    def __init__(self, reserved: frozenset[str] = RESERVED) -> None:
        self._taken = set(reserved)
        self._of: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        """The identifier of ``name`` (assigned on first request)."""
        if name not in self._of:
            base = identifier(name)
            ident, k = base, 2
            while ident in self._taken:
                ident, k = f"{base}_{k}", k + 1
            self._taken.add(ident)
            self._of[name] = ident
        return self._of[name]

    def items(self) -> list[tuple[str, str]]:
        """``(name, identifier)`` pairs in assignment order."""
        return list(self._of.items())
