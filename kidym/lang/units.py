"""Units of the KiDyM language (``x = 30, см;``, ``РАЗМЕРНОСТИ := m(кг), l(м), t(с);``).

The unit after a formula's comma is a product, quotient or power of unit names:
the original's Russian names (sheet ``РАЗМЕРНОСТИ``: ``с мин час день месяц год;
м см мм км дм миля дюйм; кг г т; рад °; Н Дж``) or any name pint knows (``m``,
``s``, ``kg``, ``N``). Conversion and dimensional analysis are done by pint.

Only when a file has ``РАЗМЕРНОСТИ`` (``UNITS``) are numbers converted: a parameter
``l = 30, см;`` with ``l(м)`` chosen becomes ``0.3`` (unit ``meter``), and every
formula with a unit is checked: its dimension, inferred from the units of the
names it uses (time ``t`` in the chosen time unit, ``x't`` = unit of ``x`` per time
unit), must match, and the two sides of ``+``/``-``/comparisons must agree; a
mismatch is a **warning** naming the formula. Names without a unit make the check
of a formula that uses them silent (unknown dimension).

Changed from the original: ``час`` is 3600 s (not 360), ``год`` is pint's year
(365.25 days, not 360), ``месяц`` is 30 days; angles are always radians in
formulas (a chosen ``a(°)`` is accepted with a warning).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from kidym.lang import ast

if TYPE_CHECKING:  # pint is imported when a file has units (its import takes 0.3 s)
    import pint

#: Russian unit names of the original → pint names.
NAMES = {
    "с": "second", "сек": "second", "мин": "minute", "час": "hour", "день": "day",
    "сут": "day", "месяц": "month30", "год": "year",
    "м": "meter", "см": "centimeter", "мм": "millimeter", "км": "kilometer",
    "дм": "decimeter", "миля": "nautical_mile", "дюйм": "inch",
    "кг": "kilogram", "г": "gram", "т": "metric_ton",
    "рад": "radian", "°": "degree", "град": "degree",
    "Н": "newton", "кН": "kilonewton", "Дж": "joule", "Вт": "watt", "Па": "pascal",
}

#: ``РАЗМЕРНОСТИ`` letters → pint dimension.
DIMENSIONS = {"m": "[mass]", "l": "[length]", "t": "[time]"}

_TOKEN = re.compile(r"[^\W\d_]+|°")


@lru_cache(maxsize=1)
def registry() -> pint.UnitRegistry:
    """The unit registry (pint), with the original's 30-day month."""
    import pint

    ureg = pint.UnitRegistry()
    ureg.define("month30 = 30 * day")
    return ureg


def _pint_error() -> type[Exception]:
    import pint

    return pint.errors.PintError


class UnitError(ValueError):
    """A unit text that cannot be read."""


def parse_unit(text: str) -> pint.Unit:
    """The pint unit of ``text`` (``"см/с^2"``, ``"кг м^2"``, ``"N*m"``)."""
    ureg = registry()
    translated = _TOKEN.sub(lambda m: NAMES.get(m.group(0), m.group(0)), text)
    translated = translated.replace("^", "**")
    try:
        unit = ureg.parse_units(translated)
    except (_pint_error(), AttributeError, TypeError, ValueError, SyntaxError) as e:
        raise UnitError(f"unknown unit `{text}` ({e}); use names such as м, см, с, кг, Н or "
                        "m, cm, s, kg, N") from None
    return unit


def base_units(raw: str) -> tuple[dict[str, pint.Unit], list[str], list[str]]:
    """Read ``m(кг), l(см), t(с)[, a(°)]``.

    Returns
    -------
    bases : dict
        pint dimension (``"[length]"``) → chosen unit.
    errors, warnings : list of str
    """
    bases: dict[str, pint.Unit] = {}
    errors: list[str] = []
    warnings: list[str] = []
    for entry in (e.strip() for e in raw.split(",") if e.strip()):
        m = re.fullmatch(r"(\w)\s*\((.+)\)", entry)
        if not m or m.group(1) not in (*DIMENSIONS, "a"):
            errors.append(f"cannot read `{entry}`: expected `m(кг)`, `l(м)`, `t(с)` or `a(рад)`")
            continue
        try:
            unit = parse_unit(m.group(2))
        except UnitError as e:
            errors.append(str(e))
            continue
        if m.group(1) == "a":
            if unit != registry().radian:
                warnings.append(f"`{entry}`: angles in formulas are always radians in kidym; "
                                "angle values with units are converted to radians")
            continue
        dim = DIMENSIONS[m.group(1)]
        if dict(unit.dimensionality) != {dim: 1}:
            errors.append(f"`{entry}`: `{m.group(2)}` is not a unit of {dim}")
            continue
        bases[dim] = unit
    return bases, errors, warnings


def target(unit: pint.Unit, bases: dict[str, pint.Unit]) -> pint.Unit:
    """The unit of ``unit``'s dimension in the chosen base units (SI for the rest)."""
    ureg = registry()
    si = {"[mass]": ureg.kilogram, "[length]": ureg.meter, "[time]": ureg.second,
          "[current]": ureg.ampere, "[temperature]": ureg.kelvin,
          "[substance]": ureg.mole, "[luminosity]": ureg.candela}
    out = ureg.dimensionless
    for dim, power in unit.dimensionality.items():
        out = out * bases.get(dim, si.get(dim, ureg.dimensionless)) ** power
    return out


def factor(unit: pint.Unit, to: pint.Unit) -> float:
    """Multiply a value in ``unit`` by this to express it in ``to``."""
    return float(registry().Quantity(1.0, unit).to(to).magnitude)


class Dimensions:
    """Infers the dimension of formula trees from the units of the names they use.

    Parameters
    ----------
    units : dict of str to pint.Unit
        Unit of each name that has one.
    time : pint.Unit
        Unit of time ``t``.
    """

    def __init__(self, units: dict[str, pint.Unit], time: pint.Unit) -> None:
        self.units = units
        self.time = time
        self.problems: list[tuple[str, ast.Node]] = []

    def of(self, node: ast.Expr) -> pint.Unit | None:
        """The unit of ``node`` (``None`` where unknown); problems go to ``problems``."""
        ureg = registry()
        one = ureg.dimensionless
        if isinstance(node, ast.Number):
            return one
        if isinstance(node, ast.Name):
            name, order = node.name, 0
            while name.endswith("'t") and len(name) > 2:
                name, order = name[:-2], order + 1
            if name == "t":
                base: pint.Unit | None = self.time
            elif name in ("pi", "exp"):
                base = one
            else:
                base = self.units.get(name)
            return None if base is None else base / self.time ** order
        if isinstance(node, ast.Unary):
            return self.of(node.operand)
        if isinstance(node, ast.Binary):
            left, right = self.of(node.left), self.of(node.right)
            if node.op in "+-%":
                self._same(left, right, node)
                return left if left is not None else right
            if left is None:
                return None
            if node.op == "^":
                if isinstance(node.right, ast.Number):
                    return left ** float(node.right.value)
                return left if left.dimensionless else None
            if right is None:
                return None
            return left * right if node.op == "*" else left / right
        if isinstance(node, ast.Conditional):
            self._same(self.of(node.left), self.of(node.right), node)
            then, other = self.of(node.then), self.of(node.otherwise)
            self._same(then, other, node)
            return then if then is not None else other
        if isinstance(node, ast.Call):
            args = [self.of(a) for a in node.args]
            if node.func.name == "sqrt" and args and args[0] is not None:
                return args[0] ** 0.5
            if node.func.name in ("abs", "floor", "ceil", "sign") and args:
                return args[0]
            if node.func.name == "atan2":
                self._same(args[0], args[1], node)
                return one
            for a, arg in zip(args, node.args):
                if a is not None and not a.dimensionless:
                    self.problems.append((f"`{node.func.name}` of a quantity in `{a:~}` "
                                          "(expected a dimensionless argument)", arg))
            return one
        return None

    def _same(self, a: pint.Unit | None, b: pint.Unit | None, node: ast.Node) -> None:
        if a is not None and b is not None and a.dimensionality != b.dimensionality:
            self.problems.append((f"`{a:~}` and `{b:~}` are added or compared", node))
