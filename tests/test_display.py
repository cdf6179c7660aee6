"""What Python and Jupyter show of the public objects (issue 29): a short ``repr`` and an
HTML summary for the model, the equations, a linearisation, its modes, an equilibrium
and a continuation; model text reaches the HTML escaped."""

from __future__ import annotations

import html

import pytest

import kidym
from tests.fixtures import DOUBLE_PENDULUM

HOSTILE = 'TASK := <script>alert("x")</script> & co;\n' + DOUBLE_PENDULUM


@pytest.fixture(scope="module")
def analysed():
    model = kidym.parse(HOSTILE)
    eq = kidym.derive(model)
    down = kidym.equilibrium(eq, state={"phi1": -1.4, "phi2": 0.1})
    lin = kidym.linearize(eq, {**down.coordinates, "phi1't": 0, "phi2't": 0})
    modes = kidym.modes(eq, {"phi1": -1.4, "phi2": 0.1})
    cont = kidym.continuation(eq, "l2", [0.5, 1.0], state={"phi1": -1.4, "phi2": 0.1})
    return model, eq, down, lin, modes, cont


def test_every_public_result_has_a_short_repr_and_an_html_view(analysed):
    for obj in analysed:
        text = repr(obj)
        assert len(text) < 300 and "array(" not in text and "\n" not in text, text
        assert type(obj).__name__ in text
        view = getattr(obj, "_repr_html_", None) or obj._repr_latex_
        assert view()


def test_the_reprs_say_what_they_hold(analysed):
    model, eq, down, lin, modes, cont = analysed
    assert repr(model) == ("Model('model', bodies=['Rod1', 'Rod2'], "
                           "coordinates=['phi1', 'phi2'], parameters=5)")
    assert repr(eq).startswith("Equations(model='model', n_q=2, n_w=2")
    # the pendulum hangs down: phi1 = -π/2, phi2 = 0 (closed form)
    assert "phi1=-1.5708" in repr(down) and "stability='stable'" in repr(down)
    assert repr(lin).startswith("Linearization(states=['phi1', 'phi2', \"phi1't\", "
                                "\"phi2't\"], inputs=[], t=0, stationary=True")
    freqs = ", ".join(f"{m.frequency:.4g}" for m in modes.modes)
    assert repr(modes).startswith(f"Modes(2 modes, frequencies [{freqs}] rad/s")
    assert repr(cont).startswith("Continuation('l2', 2 values 0.5…1")


def test_model_text_reaches_the_html_escaped(analysed):
    model = analysed[0]
    page = model._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert '<script>alert("x")</script> & co' in html.unescape(page)
    for part in ("Rod1, Rod2", "phi1, phi2", "l1 = 1.1"):
        assert part in html.unescape(page)


def test_long_lists_are_cut_in_the_repr():
    model = kidym.load("examples/biped/biped.kdm")
    text = repr(model)
    assert "… (+" in text and len(text) < 300
