"""SymEngine expressions → C99 text, counting the operations it prints.

The counts are those of the code as written (seed 003 Table 1 categories):
``additions`` (binary ``+`` and ``-``; a leading unary minus is free),
``multiplications`` (binary ``*``, including a numeric coefficient and the products of
an integer power by repeated squaring), ``divisions`` (binary ``/``) and
``functions`` (calls of ``sin``, ``cos``, ``sqrt``, ``pow``, ``atan2``, ``fabs`` …).
Comparisons inside ``Piecewise`` are not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import symengine as se

from kidym.symbolic.numbers import to_float

Expr = se.Basic

#: SymEngine function class name → C function name.
C_FUNCTIONS: dict[str, str] = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "atan2": "atan2", "exp": "exp", "log": "log", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "Abs": "fabs", "floor": "floor", "ceiling": "ceil", "sign": "kd_sign",
    "cot": "kd_cot", "sec": "kd_sec", "csc": "kd_csc", "acot": "kd_acot",
}

_RELATIONS = {"StrictLessThan": "<", "LessThan": "<=", "Equality": "==", "Unequality": "!="}
#: Conditions that CSE may take out of a ``Piecewise`` as a value of their own.
_BOOLEANS = frozenset({*_RELATIONS, "And", "Or", "Not", "BooleanTrue", "BooleanFalse"})


@dataclass
class OpCount:
    """Operations of a piece of generated code."""

    additions: int = 0
    multiplications: int = 0
    divisions: int = 0
    functions: int = 0

    def __add__(self, other: OpCount) -> OpCount:
        return OpCount(self.additions + other.additions,
                       self.multiplications + other.multiplications,
                       self.divisions + other.divisions, self.functions + other.functions)

    @property
    def total(self) -> int:
        """All operations together."""
        return self.additions + self.multiplications + self.divisions + self.functions

    def __str__(self) -> str:
        return (f"{self.additions} additions, {self.multiplications} multiplications, "
                f"{self.divisions} divisions, {self.functions} functions")


def number(x: Expr) -> str:
    """A C double literal of a SymEngine number: the nearest double, round-trip exact."""
    text = repr(to_float(x))
    if "e" not in text and "." not in text and "inf" not in text and "nan" not in text:
        text += ".0"
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"the number {x} has no finite C literal")
    return text


def _is_negative_term(x: Expr) -> bool:
    if x.is_Number:
        return float(x) < 0
    if x.is_Mul:
        c = x.args[0]
        return bool(c.is_Number and float(c) < 0)
    return False


def _power_cost(n: int) -> int:
    """Multiplications of ``x**n`` by repeated squaring."""
    return n.bit_length() - 1 + bin(n).count("1") - 1


class CPrinter:
    """Prints expressions in C, with symbol names given by ``name_of``.

    ``count`` accumulates the operations of everything printed since it was reset.
    """

    def __init__(self, name_of: Callable[[se.Symbol], str]) -> None:
        self.name_of = name_of
        self.count = OpCount()

    def reset(self) -> OpCount:
        """Return the count so far and start a new one."""
        out, self.count = self.count, OpCount()
        return out

    # ------------------------------------------------------------------ entry
    def __call__(self, expr: Expr) -> str:
        return self._print(se.sympify(expr))

    def _print(self, x: Expr) -> str:
        if x.is_Symbol:
            return self.name_of(x)
        if x.is_Number:
            return number(x)
        kind = type(x).__name__
        if kind == "Pi":
            return number(se.pi.n(53))
        if kind == "Exp1":
            return number(se.E.n(53))
        if x.is_Add:
            return self._add(x)
        if x.is_Mul:
            return self._mul(x)
        if x.is_Pow:
            return self._pow(x)
        if kind == "Piecewise":
            return self._piecewise(x)
        if kind in _BOOLEANS:
            # a condition shared by several conditionals, taken out by CSE: 1 or 0
            return self._condition(x)
        if kind in C_FUNCTIONS:
            self.count.functions += 1
            args = ", ".join(self._print(a) for a in x.args)
            return f"{C_FUNCTIONS[kind]}({args})"
        raise ValueError(f"cannot write `{x}` ({kind}) in C")

    def _atom(self, x: Expr) -> str:
        """``x`` printed so that it can be an operand of ``*`` or ``/``."""
        text = self._print(x)
        if x.is_Add or (x.is_Number and float(x) < 0) or x.is_Mul:
            return f"({text})"
        return text

    def _add(self, x: Expr) -> str:
        terms = list(x.args)
        # a positive term first reads better and saves a unary minus
        terms.sort(key=_is_negative_term)
        out = ""
        for k, term in enumerate(terms):
            if _is_negative_term(term):
                text = self._print(-term)
                if (-term).is_Add:
                    text = f"({text})"
                out += f"-{text}" if k == 0 else f" - {text}"
            else:
                out += self._print(term) if k == 0 else f" + {self._print(term)}"
        self.count.additions += len(terms) - 1
        return out

    def _mul(self, x: Expr) -> str:
        coeff = se.Integer(1)
        num: list[Expr] = []
        den: list[Expr] = []
        for a in x.args:
            if a.is_Number:
                coeff = coeff * a
            elif a.is_Pow and a.args[1].is_Number and float(a.args[1]) < 0:
                den.append(a.args[0] ** (-a.args[1]))
            else:
                num.append(a)
        sign = ""
        if float(coeff) < 0:
            sign, coeff = "-", -coeff
        parts = [self._atom(a) for a in num]
        if coeff != 1:
            if coeff.is_Rational and not coeff.is_Integer and num and not den:
                # c*x with c = p/q: one multiplication by the double nearest p/q
                parts.insert(0, number(coeff))
            elif coeff.is_Rational and not coeff.is_Integer:
                p_, q_ = coeff.get_num_den()
                if p_ != 1:
                    parts.insert(0, number(p_))
                den.insert(0, q_)
            else:
                parts.insert(0, number(coeff))
        if not parts:
            parts = ["1.0"]
        self.count.multiplications += len(parts) - 1
        text = "*".join(parts)
        if den:
            dens = [self._atom(d) for d in den]
            self.count.multiplications += len(dens) - 1
            self.count.divisions += 1
            simple = len(den) == 1 and (den[0].is_Symbol or den[0].is_Number)
            d = dens[0] if simple else "(" + "*".join(dens) + ")"
            text = f"{text}/{d}"
        return sign + text

    def _pow(self, x: Expr) -> str:
        base, exp = x.args
        if type(base).__name__ == "Exp1":
            self.count.functions += 1
            return f"exp({self._print(exp)})"
        if exp.is_Integer:
            n = int(exp)
            if n < 0:
                self.count.divisions += 1
                inv = base ** (-exp)
                text = self._print(inv)
                return f"1.0/{text}" if inv.is_Symbol else f"1.0/({text})"
            inner = self._print(base)
            self.count.multiplications += _power_cost(n)
            if n == 2 and base.is_Symbol:
                return f"{inner}*{inner}"
            if n in (2, 3, 4):
                return f"kd_pow{n}({inner})"
            return f"kd_powi({inner}, {n})"
        if exp == se.Rational(1, 2):
            self.count.functions += 1
            return f"sqrt({self._print(base)})"
        if exp == se.Rational(-1, 2):
            self.count.functions += 1
            self.count.divisions += 1
            return f"1.0/sqrt({self._print(base)})"
        self.count.functions += 1
        return f"pow({self._print(base)}, {self._print(exp)})"

    def _condition(self, c: Expr) -> str:
        kind = type(c).__name__
        if kind == "BooleanTrue":
            return "1"
        if kind == "BooleanFalse":
            return "0"
        if c.is_Symbol:
            return f"({self._print(c)} != 0)"   # a condition computed earlier (CSE)
        if kind in _RELATIONS:
            a, b = c.args
            truth = [type(v).__name__ for v in (a, b)]
            if kind in ("Equality", "Unequality") and "BooleanTrue" in truth:
                # CSE writes a shared condition `x0` as `x0 == True`
                other = self._condition(b if truth[0] == "BooleanTrue" else a)
                return other if kind == "Equality" else f"(!{other})"
            return f"({self._print(a)} {_RELATIONS[kind]} {self._print(b)})"
        if kind in ("And", "Or"):
            op = " && " if kind == "And" else " || "
            return "(" + op.join(self._condition(a) for a in c.args) + ")"
        if kind == "Not":
            return f"(!{self._condition(c.args[0])})"
        raise ValueError(f"cannot write the condition `{c}` in C")

    def _piecewise(self, x: Expr) -> str:
        args = list(x.args)
        pairs = list(zip(args[0::2], args[1::2]))
        out = "NAN"
        for value, cond in reversed(pairs):
            c = self._condition(cond)
            out = self._print(value) if c == "1" else f"({c} ? {self._print(value)} : {out})"
        return out
