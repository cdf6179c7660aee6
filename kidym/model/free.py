"""``СВОБОДНЫЕ := q2, s;``: initial values that the consistent start may change.

A model with constraints (closed loops ``УРАВНЕНИЯ``, ``СОВПАДЕНИЕ``, rolling) starts on
them: :func:`kidym.simulation.constrained.consistent_initial` solves the dependent
coordinates and speeds. It chooses them first among the states given no initial value.
An initial value that *is* given is the user's — it is changed only where the model
declares it free with ``СВОБОДНЫЕ`` (``ВІЛЬНІ``, ``FREE``): its value is then the
start of the solve (it picks the assembly branch). A coordinate frees itself and its
speed; ``q't`` frees the speed alone. Changing a given value that is not declared free
is an error naming it (:func:`kidym.simulation.spec.prepare_run`).
"""

from __future__ import annotations

from kidym.lang import ast


def read(b, ins: ast.Instruction) -> list[ast.Name]:
    """The names of one ``СВОБОДНЫЕ`` instruction (located errors for non-names)."""
    return b.name_list(ins, "a coordinate or a speed whose initial value may be solved")


def check(b, names: list[ast.Name], written: str, states: set[str]) -> tuple[str, ...]:
    """Names that are coordinates or speeds of the model (located errors otherwise)."""
    out = []
    for n in names:
        if n.name not in states:
            b.error(f"`{written}` lists coordinates and speeds whose initial values the "
                    f"start may solve; `{n.name}` is neither (the states: "
                    + ", ".join(sorted(states)) + ")", n.span)
            continue
        out.append(n.name)
    return tuple(out)


def is_free(name: str, free: tuple[str, ...]) -> bool:
    """Whether the initial value of state ``name`` is declared free (``q`` frees
    ``q`` and ``q't``)."""
    return name in free or (name.endswith("'t") and name[:-2] in free)
