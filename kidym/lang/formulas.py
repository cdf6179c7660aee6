"""Formula trees → SymEngine expressions: functions, constants, operators.

Integer and decimal literals stay exact (``0.4`` is ``2/5``) so that printed
equations stay exact; ``u % v`` is ``u - v*floor(u/v)``; ``u OP v ? a ! b`` is
``Piecewise((a, u OP v), (b, True))``. Names become symbols with the same name,
after the caller's renaming (aliases of generated body quantities); ``t`` is
:data:`kidym.model.model.TIME`, ``pi`` is π and a bare ``exp`` is *e*.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable

import symengine as se

from kidym.errors import Diagnostic, Span
from kidym.lang import ast
from kidym.model.model import TIME
from kidym.symbolic.functions import sign

Expr = se.Basic


def _one(f: Callable[[Expr], Expr]) -> tuple[int, Callable[..., Expr]]:
    return 1, f


def _whole_part(f: Callable[[Expr], Expr]) -> Callable[[Expr], Expr]:
    """``floor``/``ceil`` refusing a number that is not finite: SymEngine's own
    ``floor(inf)`` or ``floor(nan)`` kills the process with SIGFPE."""
    def whole(arg: Expr) -> Expr:
        if isinstance(arg, se.Number) and not isinstance(arg, se.Integer | se.Rational):
            try:
                finite = math.isfinite(complex(arg).real) and math.isfinite(complex(arg).imag)
            except (OverflowError, RuntimeError, TypeError, ValueError):
                finite = False
            if not finite:
                raise ValueError(f"the {f.__name__} of a number that is not finite "
                                 f"({short_form(arg)})")
        return f(arg)
    return whole


_floor = _whole_part(se.floor)
_ceiling = _whole_part(se.ceiling)


#: KiDyM and English function names → (number of arguments, constructor).
FUNCTIONS: dict[str, tuple[int, Callable[..., Expr]]] = {
    "sqrt": _one(se.sqrt), "sin": _one(se.sin), "cos": _one(se.cos),
    "tg": _one(se.tan), "tan": _one(se.tan), "ctg": _one(se.cot), "cot": _one(se.cot),
    "arcsin": _one(se.asin), "asin": _one(se.asin), "arccos": _one(se.acos),
    "acos": _one(se.acos), "arctg": _one(se.atan), "atan": _one(se.atan),
    "atan2": (2, se.atan2), "exp": _one(se.exp), "ln": _one(se.log), "log": _one(se.log),
    "sh": _one(se.sinh), "sinh": _one(se.sinh), "ch": _one(se.cosh), "cosh": _one(se.cosh),
    "th": _one(se.tanh), "tanh": _one(se.tanh), "arsh": _one(se.asinh),
    "asinh": _one(se.asinh), "arch": _one(se.acosh), "acosh": _one(se.acosh),
    "arth": _one(se.atanh), "atanh": _one(se.atanh), "abs": _one(se.Abs),
    "sign": _one(sign), "floor": _one(_floor), "ceil": _one(_ceiling),
}

#: Predefined constants (KiDyM ``InitCA``): a bare ``exp`` is *e*.
CONSTANTS: dict[str, Expr] = {"pi": se.pi, "exp": se.E}

_RELATIONS: dict[str, Callable[[Expr, Expr], Expr]] = {
    "<": se.Lt, ">": se.Gt, "<=": se.Le, ">=": se.Ge, "==": se.Eq, "\\=": se.Ne,
}

#: Largest exact number (in bits) a literal power may produce (``9^9^9`` is refused).
MAX_POWER_BITS = 100_000
#: Largest whole or rational exponent of a power of a name kept exact (``l2^21e9``:
#: substituting a parameter's exact value, 3/5, would ask GMP for gigabytes and abort
#: the process); a larger one is a double.
MAX_EXPONENT = 10_000


#: Deepest formula accepted (functions of functions, powers of powers): far beyond any
#: mechanics, far below where SymEngine's recursion runs out of stack.
MAX_DEPTH = 256


def depth_exceeds(expr: Expr, limit: int) -> bool:
    """Whether the expression tree of ``expr`` is deeper than ``limit`` (iteratively)."""
    deepest: dict[Expr, int] = {}
    stack = [(expr, 1)]
    while stack:
        e, d = stack.pop()
        if d > limit:
            return True
        if deepest.get(e, 0) >= d:
            continue
        deepest[e] = d
        stack.extend((a, d + 1) for a in e.args)
    return False


def rational(value: object) -> Expr:
    """Exact SymEngine number of a :class:`fractions.Fraction`."""
    num, den = value.numerator, value.denominator  # type: ignore[attr-defined]
    return se.Integer(num) if den == 1 else se.Rational(num, den)


def similarity_bound(a: str, b: str) -> float:
    """An upper bound of ``difflib.SequenceMatcher(None, a, b).ratio()`` in O(1).

    The ratio is ``2M/(len(a) + len(b))`` with ``M ≤ min(len(a), len(b))``: names of
    very different lengths are never close, and are not compared character by
    character (that took 39 s for a 1 MB name).
    """
    total = len(a) + len(b)
    return 2 * min(len(a), len(b)) / total if total else 1.0


def suggest(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean `x`?)`` for the closest candidate, or ``""``.

    Short names (three characters or fewer) are matched more loosely: one wrong
    letter of two is still a likely typo (``Jq`` → ``Jx``).
    """
    if len(name) <= 3:
        cutoff = min(cutoff, 0.5)
    best: tuple[float, str] | None = None
    for candidate in candidates:  # ties go to the earliest candidate
        if similarity_bound(name, candidate) < cutoff:
            continue  # cannot be close enough: a 1 MB name costs nothing
        ratio = difflib.SequenceMatcher(None, name, candidate).ratio()
        if ratio >= cutoff and (best is None or ratio > best[0]):
            best = (ratio, candidate)
    return f" (did you mean `{best[1]}`?)" if best else ""


class FormulaError(Exception):
    """A formula that cannot be formed; ``span`` locates the offending part."""

    def __init__(self, message: str, span: Span | None) -> None:
        super().__init__(message)
        self.diagnostic = Diagnostic(message, span)


class Converter:
    """Converts formula trees, renaming names through ``rename``.

    Parameters
    ----------
    rename : callable, optional
        Maps a name as written to the name of its symbol (identity by default).
    """

    def __init__(self, rename: Callable[[str], str] | None = None) -> None:
        self.rename = rename or (lambda n: n)

    def __call__(self, node: ast.Expr) -> Expr:
        """The SymEngine expression of ``node``.

        Raises
        ------
        FormulaError
            Unknown function, wrong number of arguments, a name used as a function,
            an out-of-range number, or an operation SymEngine refuses.
        """
        try:
            expr = self._expr(node)
        except FormulaError:
            raise
        except RecursionError:
            raise FormulaError("formula is nested too deeply; split it into several named "
                               "formulas", node.span) from None
        except (RuntimeError, TypeError, ValueError, ZeroDivisionError, OverflowError,
                NotImplementedError) as e:
            raise FormulaError(f"cannot form this formula: {e}", node.span) from e
        if depth_exceeds(expr, MAX_DEPTH):
            # SymEngine's own recursion (printing, differentiation) crashed the process
            # on such formulas (2^2^…^0.01 20 000 deep, sin(sin(… 10 000 deep)
            raise FormulaError(f"formula is nested more than {MAX_DEPTH} levels deep; split "
                               "it into several named formulas", node.span)
        if any(expr.has(bad) for bad in (se.zoo, se.nan, se.oo, -se.oo)):
            raise FormulaError("this formula is undefined or infinite (division by zero?): "
                               f"it evaluates to `{short_form(expr)}`", node.span)
        return expr

    def symbol(self, name: str) -> Expr:
        """The expression a bare name stands for."""
        if name in CONSTANTS:
            return CONSTANTS[name]
        canonical = self.rename(name)
        if canonical == TIME.name:
            return TIME
        return se.Symbol(canonical)

    def _expr(self, root: ast.Expr) -> Expr:
        """Post-order conversion with an explicit stack (formulas may be very long)."""
        done: list[Expr] = []
        stack: list[tuple[ast.Expr, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            children = _children(node)
            if not ready and children:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(children))
                continue
            args = done[len(done) - len(children):] if children else []
            if children:
                del done[len(done) - len(children):]
            done.append(self._node(node, args))
        return done[0]

    def _node(self, node: ast.Expr, args: list[Expr]) -> Expr:
        if isinstance(node, ast.Number):
            return rational(node.value)
        if isinstance(node, ast.Name):
            return self.symbol(node.name)
        if isinstance(node, ast.Unary):
            return -args[0] if node.op == "-" else args[0]
        if isinstance(node, ast.Binary):
            return self._binary(node, args[0], args[1])
        if isinstance(node, ast.Conditional):
            left, right, then, otherwise = args
            rel = _RELATIONS[node.op](left, right)
            return se.Piecewise((then, rel), (otherwise, True))
        if isinstance(node, ast.Call):
            return self._call(node, args)
        raise FormulaError(f"expected a formula, got {type(node).__name__}",
                           getattr(node, "span", None))

    def _binary(self, node: ast.Binary, left: Expr, right: Expr) -> Expr:
        op = node.op
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if op == "/":
            return left / right
        if op == "%":
            return left - right * _floor(left / right)
        right = self._check_power(left, right, node)
        return left ** right

    @staticmethod
    def _check_power(base: Expr, exponent: Expr, node: ast.Binary) -> Expr:
        """The exponent to use (raising for a power of numbers too large to hold): a
        whole or rational exponent of a name beyond :data:`MAX_EXPONENT` becomes a
        double, so that substituting a parameter's exact value never asks for an exact
        power of billions of digits (``l^21e9`` with ``l = 3/5``); the power is then
        evaluated as the engines evaluate it, in floating point. An exponent beyond the
        range of a double is left to the model's check of numbers (a located error)."""
        if isinstance(exponent, se.Integer | se.Rational) and not isinstance(base, se.Number):
            try:
                value = float(exponent)
            except (OverflowError, RuntimeError, TypeError, ValueError):
                return exponent
            if math.isfinite(value) and abs(value) > MAX_EXPONENT:
                return se.RealDouble(value)
        if not (isinstance(base, se.Number) and isinstance(exponent, se.Number)):
            return exponent
        try:
            e = abs(float(exponent))
            b = abs(float(base))
        except (RuntimeError, TypeError, ValueError, OverflowError):
            return exponent
        bits = max(1.0, math.log2(b) if b > 0 else 1.0, -math.log2(b) if 0 < b < 1 else 1.0)
        if e * bits > MAX_POWER_BITS and isinstance(exponent, se.Integer | se.Rational):
            raise FormulaError("number too large: this power of numbers has more than "
                               f"{MAX_POWER_BITS} bits", node.span)
        return exponent

    def _call(self, node: ast.Call, args: list[Expr]) -> Expr:
        return FUNCTIONS[node.func.name][1](*args)


def short_form(expr: Expr, limit: int = 60) -> str:
    text = str(expr)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _children(node: ast.Expr) -> tuple[ast.Expr, ...]:
    if isinstance(node, ast.Unary):
        return (node.operand,)
    if isinstance(node, ast.Binary):
        return (node.left, node.right)
    if isinstance(node, ast.Conditional):
        return (node.left, node.right, node.then, node.otherwise)
    if isinstance(node, ast.Call):
        fname = node.func.name
        if fname not in FUNCTIONS:
            raise FormulaError(f"unknown function `{fname}`{suggest(fname, FUNCTIONS)}",
                               node.func.span)
        arity = FUNCTIONS[fname][0]
        if len(node.args) != arity:
            raise FormulaError(
                f"function `{fname}` takes {arity} argument{'s' if arity > 1 else ''}, "
                f"got {len(node.args)}", node.span)
        return node.args
    return ()
