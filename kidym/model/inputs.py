"""``ВХОДЫ`` (``INPUTS``): external inputs, names whose values come from outside the
model at run time — a Python callback or a table (:mod:`kidym.simulation.inputs`).

::

    ВХОДЫ := u;                 # `u` has no value in the model
    Pu.x = u;                   # used in force characteristics (and definitions of them)

An input is a leaf of the equations like a control of ``НЕИЗВЕСТНЫЕ``: it enters the
forces, never a position or a velocity formula (its time derivative is unknown). Free
functions over the model builder (:mod:`kidym.model.build`), like
:mod:`kidym.model.programmed`: :func:`read` while the instruction lists are read,
:func:`check` once names are classified.
"""

from __future__ import annotations

from kidym.lang import ast


def read(b, ins: ast.Instruction) -> list[ast.Name]:
    """The names listed in ``ВХОДЫ``; located errors for anything but plain names."""
    return b.name_list(ins, "an input name")


def check(b, names: list[ast.Name]) -> tuple[str, ...]:
    """Check the inputs once names are classified; their names in order.

    An input has no value or formula in the model, is not a coordinate, a control or a
    generated name, enters no position or velocity formula and is used somewhere.
    """
    ins = b.instructions.get("INPUTS")
    controls = {n.name for n in getattr(b, "control_names", ())}
    for n in names:
        if n.name in b.params or n.name in b.defs:
            b.error(f"`{n.name}` is listed in `{ins.written}` but has a value or formula; an "
                    "input gets its value at run time (`kidym.simulate(..., inputs={"
                    f"'{n.name}': …}})`, `--input {n.name}=FILE.csv` of `kidym run` and "
                    "`kidym sweep`): remove its definition", n.span)
        elif n.name in controls:
            b.error(f"`{n.name}` is listed both in `{ins.written}` and as a control; a control "
                    "is solved from programmed constraints, an input is given: list it once",
                    n.span)
        elif n.name in b.coordinates or n.name in b.owner_of_generated or n.name in b.structural:
            b.error(f"`{n.name}` is listed in `{ins.written}` but is a coordinate or enters a "
                    "position or a velocity formula; an input enters only force "
                    f"characteristics (`Pu.x = {n.name};`)", n.span)
        elif not any(u.base == n.name and u.kind in ("characteristic", "definition")
                     for u in b.uses):
            b.error(f"input `{n.name}` of `{ins.written}` is used nowhere; use it in a force "
                    f"characteristic (`Pu.x = {n.name};`) or remove it", n.span)
    return tuple(n.name for n in names)


def refuse(model, what: str, *, listed: bool = True) -> None:
    """Raise ``ValueError`` if ``model`` has external inputs, which ``what`` (an export,
    an analysis) cannot take: it says how to write the model for it (``listed``: ``what``
    names its inputs among the parameters, ``inputs=[…]``)."""
    if model.inputs:
        u = model.inputs[0]
        how = f" and name it in inputs=['{u}']" if listed else ""
        raise ValueError(
            f"model `{model.name}` has external inputs (`ВХОДЫ`/`INPUTS`: "
            f"{', '.join(model.inputs)}), whose values are given only to a run; for {what}, "
            f"write each as a parameter (`{u} = 0;` instead of listing it){how} "
            "(docs/language.md §2.4f)")
