"""`ФОРМЫ`/`ФОРМИ`/`SHAPES`: display solids of bodies (kidym.model.display), read with
located errors; display only — the equations are those of the model without it."""

from __future__ import annotations

import pytest

import kidym
from kidym.errors import ParseError

BASE = """l = 0.8;
Cart | Sx(x) | m(1), Jx(0), Jy(0), Jz(0);
Pole~Cart | Rz(th) | Sy(-l/2), m(0.3), Jz(0.3*l^2/12);
"""


@pytest.mark.parametrize("keyword", ["SHAPES", "ФОРМЫ", "ФОРМИ"])
def test_the_shapes_are_read_in_every_language(keyword):
    m = kidym.parse(BASE + f"{keyword} := Cart(брус(0.3, 0.15, 0.1)), "
                    "Pole(капсула(0.04, l, y));")
    assert [(s.body, s.kind, s.axis) for s in m.shapes] == [("Cart", "box", 2),
                                                            ("Pole", "capsule", 1)]
    plain = kidym.derive(kidym.parse(BASE))
    shaped = kidym.derive(m)
    assert shaped.mass_matrix == plain.mass_matrix and shaped.forcing == plain.forcing


@pytest.mark.parametrize("item, message", [
    ("Cart(box(0.3, 0.15))", r"4:16: error: `SHAPES`: a box takes three edges"),
    ("Pole(capsule(0.04, l, w))", r"4:33: error: `SHAPES`: the axis of a capsule is `x`, "
                                  "`y` or `z`; got `w`"),
    ("Rod(sphere(1))", r"4:11: error: `SHAPES`: `Rod` is not a body \(bodies: Cart, Pole\)"),
    ("Cart(cone(1))", r"4:16: error: `SHAPES`: unknown shape `cone`; the shapes are box, "
                      "cylinder, sphere, capsule"),
    ("Pole(sphere(x))", r"4:11: error: a size of `Pole` in `SHAPES` depends on coordinate "
                        "`x`"),
    ("Pole(sphere(1)), Pole(box(1, 1, 1))", r"error: `SHAPES`: body `Pole` is given a "
                                            "shape twice"),
    ("Cart(box(0.3, 0, 1))", r"4:11: error: `SHAPES`: a size of `Cart` must be positive; "
                             "got 0"),
    ("Pole(sphere(l - 1))", r"4:11: error: `SHAPES`: a size of `Pole` must be positive; "
                            "got -0.2"),
    ("Pole(sphere(sqrt(-1)))", r"4:11: error: a size of `Pole` in `SHAPES` is not a finite "
                               "real number"),
    ("3", r"4:11: error: `SHAPES` names how bodies are drawn: `Body\(box\(a, b, c\)\)`"),
])
def test_located_errors(item, message):
    with pytest.raises(ParseError, match=message):
        kidym.parse(BASE + f"SHAPES := {item};")
