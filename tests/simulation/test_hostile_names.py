"""A model file is data: no name reaches generated Python or C, and opening one runs nothing.

The oracle is the same mechanics under plain names: a model whose every name is hostile
(comment closers, directives, digraphs, trigraphs, quotes, backslashes, newlines, bidi
controls, C macros, CSE temporaries, names that collide after mapping) must give the
same trajectory as the plain one, in both engines, and the generated sources must hold
none of that text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import numpy as np
import pytest
import symengine as se
from hypothesis import given, settings
from hypothesis import strategies as st

import kidym
from kidym.codegen import generate_c
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.numpy_engine import generate_python
from kidym.simulation.simulate import NumpySystem
from kidym.symbolic.identifiers import IdentifierMap, comment_text, reserved
from tests.codegen.shared import kidym_cache  # noqa: F401

# time-dependent on purpose: the forcing holds `t` (the compiled engine once lost it)
PLAIN = """
m1 = 1.3; m2 = 0.7; l1 = 1.1; l2 = 0.9; g = 9.81; c = 2; A = 0.5; W = 3;
L = l1 + l2/2;
Rod1      | Rz(phi1)         | Sx(l1/2), m1, 0, m1*l1^2/12, m1*l1^2/12;
Rod2~Rod1 | Sx(l1), Rz(phi2) | Sx(l2/2), m2, 0, m2*l2^2/12, m2*l2^2/12;
Cs.phi2 = c;
Pf.phi1 = A*sin(W*t)*L;
GRAVITY := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), phi1(0.3), phi2(-0.2);
ВРЕМЯ := t(0, 1);
"""

#: The two reproducers of the audit, then the rest of the corpus.
PY_PAYLOAD = ("k$(\nimport os\nclass X: __class_getitem__ = os.system\n"
              "X[\"id > PWNED\"]\n')'")
C_PAYLOAD = 'q$(*/\n%:include "/proc/self/cwd/evil.h"\n/*)'
HOSTILE = {
    "phi1": C_PAYLOAD,
    "phi2": "q$(*/ int x = 42, y /*)",
    "m1": PY_PAYLOAD,
    "m2": 'a"b\\c',
    "l1": "NAN",
    "l2": "x0",
    "g": "cse0",
    "c": "g??=h%:i",
    "A": "\u202eevil\u202c",
    "W": "KIDYM_NQ",
    "L": "kd_pow2",
    "Rod1": "B*/\n#define sin cos\n/*",
    "Rod2": "B2\\\n'''",
}
#: Fragments of the payloads that must appear nowhere in a generated source.
FRAGMENTS = ("*/ int", "%:include", "evil.h", "import os", "__class_getitem__", "??=",
             "\u202e", "#define sin", 'a"b', "\\c")


def _rename(node: object, names: Mapping[str, str]) -> object:
    """``node`` with every model name renamed (strings, symbols, mapping keys)."""
    if isinstance(node, str):
        return _rename_text(node, names)
    if isinstance(node, se.Basic):
        return node.xreplace({se.Symbol(a): se.Symbol(b) for a, b in _all(names).items()})
    if isinstance(node, tuple):
        return tuple(_rename(x, names) for x in node)
    if isinstance(node, Mapping):
        return {_rename(k, names): _rename(v, names) for k, v in node.items()}
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return dataclasses.replace(node, **{
            f.name: _rename(getattr(node, f.name), names)
            for f in dataclasses.fields(node) if f.init and f.name not in ("source", "span")})
    return node


def _all(names: Mapping[str, str]) -> dict[str, str]:
    """Names and their derivative names (``phi1't``)."""
    out = dict(names)
    out.update({f"{a}'t": f"{b}'t" for a, b in names.items()})
    return out


def _rename_text(text: str, names: Mapping[str, str]) -> str:
    table = _all(names)
    if text in table:
        return table[text]
    # generated names hold body names (`XCRod1`), element labels hold none here
    for a in sorted(names, key=len, reverse=True):
        if a.startswith("Rod") and text.endswith(a):
            return text[: -len(a)] + names[a]
    return text


@pytest.fixture(scope="module")
def models():
    plain = kidym.parse(PLAIN)
    hostile = _rename(plain, HOSTILE)
    assert hostile.coordinates == (HOSTILE["phi1"], HOSTILE["phi2"])
    return plain, hostile


def test_no_model_text_in_the_generated_python_or_c(models):
    _, hostile = models
    eq = kidym.derive(hostile)
    sources = {"python": generate_python(eq).source, "c": generate_c(eq).source}
    for engine, src in sources.items():
        for raw in (*HOSTILE.values(), *FRAGMENTS):
            if re.fullmatch(r"\w+", raw):
                # a word the C or Python uses itself (NAN, cse0…): never given to a model
                # name (test_names_of_the_c_library…), and the run below stays right
                continue
            assert raw not in src, f"{engine} source holds {raw!r}"
        assert "\u202e" not in src and "??" not in src
    # comments of the C hold only letters, digits and safe punctuation
    for comment in re.findall(r"/\*(.*?)\*/", sources["c"], flags=re.S):
        assert "/*" not in comment and "#" not in comment
    for line in sources["python"].splitlines():
        code, _, comment = line.partition("#")
        assert "'" not in code and '"' not in code


@pytest.mark.parametrize("engine", ["numpy", "compiled"])
def test_hostile_names_run_the_same_mechanics(models, engine, kidym_cache):  # noqa: F811
    plain, hostile = models
    build = NumpySystem.build if engine == "numpy" else CompiledSystem.build
    f, g = build(kidym.derive(plain)), build(kidym.derive(hostile))
    p, q = f.parameter_vector(), g.parameter_vector()
    rng = np.random.default_rng(3)
    for t in (0.0, 0.37, 1.9):  # the forcing depends on t
        y = rng.normal(size=4)
        np.testing.assert_allclose(g.rhs(t, y, q), f.rhs(t, y, p), rtol=1e-12, atol=1e-12)
    a = kidym.simulate(plain, engine=engine, rtol=1e-10, atol=1e-12)
    b = kidym.simulate(hostile, engine=engine, rtol=1e-10, atol=1e-12)
    for name in ("phi1", "phi2", "phi1't", "phi2't"):
        # the order of floating-point operations follows the names: steps may differ
        np.testing.assert_allclose(b[_all(HOSTILE)[name]], a[name], rtol=0, atol=1e-7)
    assert abs(a["phi1"][-1] - a["phi1"][0]) > 1e-3  # it moved


def test_the_two_reproducers_are_located_errors_and_run_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.h").write_text(
        '__attribute__((constructor)) static void f(void) { '
        'FILE *f = fopen("PWNED", "w"); }\n', encoding="utf-8")
    for name in (PY_PAYLOAD, C_PAYLOAD, "q$(*/ int x = 42, y /*)"):
        text = PLAIN.replace("phi1", name)
        with pytest.raises(kidym.ParseError) as e:
            kidym.parse(text, filename="evil.kdm")
        assert re.search(r"evil\.kdm:\d+:\d+: error: ", str(e.value))
    assert not (tmp_path / "PWNED").exists()


def test_an_unexpanded_template_is_an_error():
    with pytest.raises(kidym.ParseError, match=r"template in a name is replaced only by"):
        kidym.parse(PLAIN.replace("phi2", "phi$(x)"))
    # inside РАЗМНОЖИТЬ it is expanded to an ordinary name
    model = kidym.parse("РАЗМНОЖИТЬ : i(1, 2);\nm$i = 5;\nk$i = m$(3-i) + 1;\n"
                        "Ball | Sy(y) | m(1), Jx(1), Jy(1), Jz(1);")
    assert {"m1", "m2"} <= set(model.parameters_names())
    assert str(model.definition("k1").expr) == "1 + m2"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=25, unique=True))
def test_any_names_map_to_distinct_safe_identifiers(names):
    ids = IdentifierMap()
    got = [ids(n) for n in names]
    assert len(set(got)) == len(got)
    for ident in got:
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", ident)
        assert not reserved(ident)
    for n in names:
        text = comment_text(n)
        assert not any(bad in text for bad in ("*/", "/*", "??", "%:", "\\", "#", "\n"))
        assert all(ch.isalnum() or ch in "_'@$~" for ch in text)


@pytest.mark.parametrize("name", ["NAN", "INFINITY", "HUGE_VAL", "cse0", "KIDYM_NQ",
                                  "kd_pow2", "double_t", "M_PIl", "_start", "y", "sin"])
def test_names_of_the_c_library_and_of_kidym_are_never_given(name):
    ident = IdentifierMap()(name)
    assert ident != name and not reserved(ident)


def test_model_names_like_symengine_temporaries_stay_the_models(kidym_cache):  # noqa: F811
    """SymEngine's CSE calls its temporaries x0, x1 …, avoiding only the names of the
    routine at hand: a model's `x1` hoisted into the constants after another routine
    made a temporary `x1` must still be the model's `x1`."""
    names = " ".join(f"x{k} = {k + 1.5};" for k in range(12))
    force = " + ".join(f"x{k}*x{k + 1}*sin(q)" for k in range(11))
    text = (f"{names} B | Sx(q) | m(2), Jx(1), Jy(1), Jz(1); Pf.q = -({force})*q^2;"
            "Cs.q = 3; INITIAL := t(0), q(0.4); SHOW := q, q't;")
    model = kidym.parse(text)
    f = NumpySystem.build(kidym.derive(model))
    g = CompiledSystem.build(kidym.derive(model))
    rng = np.random.default_rng(5)
    for _ in range(3):
        y = rng.normal(size=2)
        np.testing.assert_allclose(g.rhs(0.0, y, g.parameter_vector()),
                                   f.rhs(0.0, y, f.parameter_vector()), rtol=1e-12)
