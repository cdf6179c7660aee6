"""Warnings for likely slips of a model that is otherwise valid (issue 29).

Each is located at its place in the file (``FILE:LINE:COL: warning: …``) and the model
is built as written:

* a **parameter defined and never used** (``c = 5;`` that no formula, body, element
  or instruction uses);
* a **new coordinate whose name differs from a defined name only in case**, that
  name used nowhere: ``Sx(L1)`` with ``l1 = 1`` makes ``L1`` a coordinate, a degree of
  freedom more — "did you mean `l1`?";
* an **angle given in degrees where radians are read**: with ``РАЗМЕРНОСТИ`` on, an
  initial value of an angle coordinate beyond a full turn (``INITIAL := th(30);`` is
  30 rad), with the two ways to write degrees.

Functions over the model builder's tables (:mod:`kidym.model.build`), called once the
names are classified.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol

from kidym.errors import Diagnostic


class _Builder(Protocol):   # what is read of kidym.model.build._Builder
    variables: dict
    uses: list
    coordinates: list
    instructions: dict
    body_records: list

    def warn(self, message: str, span) -> None: ...


#: the words of the warning :func:`unused_parameters` gives
UNUSED = "is defined but never used"


def unused_parameters(b: _Builder, shown: Iterable[str] = ()) -> None:
    """``parameter `c` is defined but never used``, at its definition; ``shown``: the
    names the model's plots and outputs show (a use too)."""
    used = {u.base for u in b.uses} | set(shown)
    for name, var in b.variables.items():
        if var.value is not None and name not in used:
            b.warn(f"parameter `{name}` {UNUSED} (a misspelt name where it was meant to "
                   "be used becomes a coordinate or an error)", var.stmt.name.span)


def is_unused_warning(d: Diagnostic) -> bool:
    """Whether ``d`` is the warning of :func:`unused_parameters`."""
    return d.severity == "warning" and UNUSED in d.message


def unused_in_every_task(per_task: Sequence[Sequence[Diagnostic]]) -> list[Diagnostic]:
    """The unused-parameter warnings of a file of tasks that hold in every task from the
    one that first gives them on: a parameter of task 1 used by task 2 only is used."""
    out: list[Diagnostic] = []
    sets = [{d for d in diags if is_unused_warning(d)} for diags in per_task]
    for k, found in enumerate(sets):
        for d in found:
            if d not in out and all(d in later for later in sets[k:]):
                out.append(d)
    return out


def case_slips(b: _Builder) -> None:
    """A coordinate whose name is a defined name in another case, that name used nowhere
    (``Q1 = 0.4;`` the target of a coordinate ``q1`` is used): "did you mean"."""
    used = {u.base for u in b.uses}
    defined = {name.casefold(): name for name in b.variables if name not in used}
    first: dict[str, object] = {}
    for u in sorted(b.uses, key=lambda u: u.start):
        first.setdefault(u.base, u)
    for q in b.coordinates:
        meant = defined.get(q.casefold())
        if meant is None or meant == q or q in b.variables or q not in first:
            continue
        b.warn(f"`{q}` has no value or formula, so it is a new coordinate (a degree of "
               f"freedom); did you mean `{meant}`? (names are case-sensitive)",
               first[q].span)


def degrees_for_radians(b: _Builder, values: dict[str, float], angles: set[str],
                        spans: dict) -> None:
    """With ``РАЗМЕРНОСТИ``: an initial angle beyond a full turn was likely meant in
    degrees."""
    if "UNITS" not in b.instructions:
        return
    for name, value in values.items():
        if name in angles and abs(value) > 2 * math.pi and name in spans:
            b.warn(f"the initial value of angle `{name}` is read as {value:g} rad "
                   f"({math.degrees(value):g}°, more than a full turn): angles are in "
                   f"radians; for {value:g}° write `{name}({value:g}*pi/180)`, or a "
                   f"parameter `{name}0 = {value:g}, °;` (converted to radians) and "
                   f"`{name}({name}0)`", spans[name])
