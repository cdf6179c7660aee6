"""``ВАРЬИРОВАТЬ`` of parameters and initial values: the forms and their errors
(docs/language.md §5.11). The runs are tested in tests/study."""

from __future__ import annotations

import pytest

from kidym.errors import ModelError
from kidym.lang import parse

BASE = ("m = 2; l = 0.5; g = 9.81;\nRod | Rz(phi) | Sx(l/2), m(m), Jz(m*l^2/12);\n"
        "GRAVITY := g, 0, 0;\n")


def located(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ModelError) as info:
        parse(text, filename="study.kdm")
    return [(d.span.line, d.span.column, d.message) for d in info.value.errors]


def test_one_parameter_grid_start_end_count() -> None:
    model = parse(BASE + "ВАРЬИРОВАТЬ := l, 0.5, 2, 4;")
    [v] = model.variations
    assert (v.name, v.kind) == ("l", "grid")
    assert v.values == pytest.approx((0.5, 1.0, 1.5, 2.0))
    assert model.sampling is None and (model.t_start, model.t_end) == (0.0, 10.0)


def test_list_of_grids_with_time_and_an_initial_value() -> None:
    model = parse(BASE + "VARY := t(0, 3), l(1, 2, 3), phi't(0, 0.3, 2), m(2*l, 2*l, 1);")
    assert (model.t_start, model.t_end) == (0.0, 3.0)
    assert [(v.name, v.values) for v in model.variations] == [
        ("l", pytest.approx((1.0, 1.5, 2.0))), ("phi't", pytest.approx((0.0, 0.3))),
        ("m", pytest.approx((1.0,)))]   # values are formulas of parameters


def test_random_sample_with_ranges_and_seed() -> None:
    model = parse(BASE + "ВАРЬИРОВАТЬ := СЛУЧАЙНО(50, 7), l(0.5, 2), phi(0, 0.2);")
    assert (model.sampling.samples, model.sampling.seed) == (50, 7)
    assert [(v.name, v.kind, v.values) for v in model.variations] == [
        ("l", "random", (0.5, 2.0)), ("phi", "random", (0.0, 0.2))]
    assert parse(BASE + "VARY := RANDOM(3), l(1, 2);").sampling.seed == 0
    assert parse(BASE + "ВАРІЮВАТИ := ВИПАДКОВО(3, 1), l(1, 2);").sampling.samples == 3


def test_time_form_unchanged() -> None:
    model = parse(BASE + "ВАРЬИРОВАТЬ := t, 0.5, 3, 0.01;")
    assert (model.t_start, model.t_end, model.variations) == (0.5, 3.0, ())


@pytest.mark.parametrize(("item", "column", "message"), [
    ("l, 0.5, 2", 9, "needs `name, start, end, count`"),
    ("l(1, 2, 2.5)", 17, "must be a whole number of at least 1, got 2.5"),
    ("l(1, 2)", 9, "two values are the range of a random sample"),
    ("RANDOM(5), l(1, 2, 3)", 9, "takes ranges `name(low, high)`, not grids"),
    ("l(2, 1), RANDOM(5)", 9, "the range of `l` must increase"),
    ("l(1, 2, 3), l(1, 2, 3)", 21, "`l` is varied twice"),
    ("q(1, 2, 3)", 9, "`q` cannot be varied: it is not a parameter nor a state"),
    ("XCRod(1, 2, 3)", 9, "`XCRod` cannot be varied"),
    ("RANDOM(0), l(1, 2)", 9, "number of runs of `RANDOM` must be a whole number"),
])
def test_errors_are_located(item: str, column: int, message: str) -> None:
    [(line, col, msg)] = located(BASE + f"VARY := {item};")
    assert (line, col) == (4, column) and message in msg


def test_dependent_speed_and_definition_cannot_be_varied() -> None:
    text = ("r = 0.2; x't = r*w; Jm.x = 1; PSEUDOVELOCITIES := w; d = 2*r;\n"
            "VARY := x't(1, 2, 3), d(1, 2, 3), w(0, 1, 2);")
    msgs = [m for _l, _c, m in located(text)]
    assert any("`x't` is a dependent speed" in m for m in msgs)
    assert any("`d` is given by a formula" in m for m in msgs)
    assert len(msgs) == 2   # the pseudo-velocity w takes an initial value: it can be varied


def test_a_study_needs_the_dynamics() -> None:
    [(line, _c, msg)] = located("РАСЧЕТ := КИНЕМАТИКА; k = 2; x = k*t; SHOW := x;\n"
                                "ВАРЬИРОВАТЬ := t(0, 1), k(1, 2, 3);")
    assert line == 2 and "needs `РАСЧЕТ := ДИНАМИКА`" in msg
