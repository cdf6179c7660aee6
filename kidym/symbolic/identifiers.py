"""Deterministic safe identifiers for any model name (Cyrillic, Greek, ``x't``…).

Generated code (Python, C) and machine-readable output (JSON) need plain ASCII
identifiers. **No text of a model file reaches generated code**: every name is
mapped by :class:`IdentifierMap` to ``[A-Za-z][A-Za-z0-9_]*``, unique, and never one
of the names the generated code or its headers use themselves (keywords, ``math.h``
functions and macros such as ``NAN`` or ``HUGE_VAL``, names reserved to the C
implementation, kidym's own ``kd_*``/``kidym_*``/``KIDYM_*``, the CSE temporaries
``cse0``…). Comments may show a name only through :func:`comment_text`, which
keeps letters, digits and ``_ ' @ $`` and nothing that can end a comment or a
line. The original names travel alongside, in tables (``CCode.state_names``…).
"""

from __future__ import annotations

import keyword
import re
import unicodedata

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

#: Names ``sympify`` would read as SymPy objects (``sympy.abc._clash``, written out so
#: that generating code does not import SymPy; tests/test_imports.py pins it to SymPy's)
SYMPY_CLASH = frozenset({"E", "I", "N", "O", "Q", "S", "beta", "gamma", "pi", "zeta"})

#: Names a generated identifier must never take (C and Python keywords, libm).
RESERVED = frozenset(keyword.kwlist) | {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
    "void", "volatile", "while", "inline", "restrict", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "exp", "log", "sqrt", "sinh", "cosh", "tanh", "asinh", "fabs", "floor",
    "ceil", "pow", "y", "p", "out", "ydot", "M", "F", "np", "math", "pi", "E",
    # the rest of C99 <math.h> (functions, function-like macros, types), C library
    # names a generated file may meet, and Python names the NumPy engine uses
    "acosh", "atanh", "cbrt", "copysign", "erf", "erfc", "exp2", "expm1", "fdim", "fma",
    "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "llrint",
    "llround", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan",
    "nearbyint", "nextafter", "nexttoward", "remainder", "remquo", "rint", "round",
    "scalbln", "scalbn", "signbit", "tgamma", "trunc", "fpclassify", "j0", "j1", "jn",
    "y0", "y1", "yn", "gamma", "signgam", "errno", "abs", "exit", "main", "bool", "true",
    "false", "Abs", "Piecewise", "ceiling", "sign", "cot", "sec", "csc",
    "acot", "True", "False", "None", "dtype", "isfinite", "isinf", "isnan", "isnormal",
    "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater", "isunordered",
    "math_errhandling", "float_t", "double_t",
} | SYMPY_CLASH

#: Patterns no generated identifier may match: names the C implementation reserves
#: (``_x``), the prefixes of ``<math.h>`` macros (``FP_…``, ``M_…`` as in ``M_PIl``),
#: POSIX type names (``…_t``), object-like macros by convention (``NAN``,
#: ``INFINITY``, ``HUGE_VAL``, ``EDOM``: any all-capitals name of two or more
#: characters), kidym's own prefixes, and the CSE temporaries the generators name.
RESERVED_PATTERN = re.compile(r"_|kd_|kidym_|KIDYM_|cse\d|FP_|M_|MATH_|.*_t$|[A-Z][A-Z0-9_]+$")

#: Characters a comment of generated code may show of a name (besides letters and
#: digits of any script): none of them can close a comment, start a directive
#: (``#``, ``%:``), form a trigraph (``??=``) or splice a line (``\\``).
_COMMENT_PUNCT = frozenset("_'@$")


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
    return out[:48]


def reserved(ident: str, names: frozenset[str] = RESERVED) -> bool:
    """Whether ``ident`` is one of ``names`` or matches :data:`RESERVED_PATTERN`."""
    return ident in names or RESERVED_PATTERN.match(ident) is not None


def comment_text(name: str, limit: int = 60) -> str:
    """``name`` as a comment of generated code may show it.

    Letters and digits of any script and ``_ ' @ $`` are kept; every other character
    (spaces, punctuation, control and bidirectional-override characters) becomes
    ``~``, so the text can neither close the comment nor change the code around it.
    Longer names are cut to ``limit`` characters and marked with ``~~``.
    """
    out = "".join(ch if (ch.isalnum() or ch in _COMMENT_PUNCT) else "~" for ch in name)
    return out if len(out) <= limit else out[:limit] + "~~"


class IdentifierMap:
    """Assigns unique identifiers to names, deterministically in call order.

    An identifier is ``[A-Za-z][A-Za-z0-9_]*`` (:func:`identifier`), made unique
    among those already given, and never :func:`reserved`: a name whose readable
    form is taken or reserved gets a numeric suffix, ``NAN`` → ``NAN_2``.
    """

    def __init__(self, reserved: frozenset[str] = RESERVED) -> None:
        self._reserved = frozenset(reserved)
        self._taken: set[str] = set()
        self._of: dict[str, str] = {}

    def _free(self, ident: str) -> bool:
        return ident not in self._taken and not reserved(ident, self._reserved)

    def __call__(self, name: str) -> str:
        """The identifier of ``name`` (assigned on first request)."""
        if name not in self._of:
            base = identifier(name)
            ident, k = base, 2
            while not self._free(ident):
                ident, k = f"{base}_{k}", k + 1
                if RESERVED_PATTERN.match(ident):
                    # out of every pattern: `v_` starts none, and `_<k>` ends none
                    ident = f"v_{ident}"
            self._taken.add(ident)
            self._of[name] = ident
        return self._of[name]

    def items(self) -> list[tuple[str, str]]:
        """``(name, identifier)`` pairs in assignment order."""
        return list(self._of.items())
