"""Generated C: operation counts, determinism, identifiers, folding, hoisting.

The numbers the C computes are checked against the NumPy reference engine (a
second, independent route from the same equations: Python source over the named
quantities, LAPACK solve); the counts against counts made by hand.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import symengine as se

import kidym
from kidym.codegen import generate_c
from kidym.codegen.cprint import CPrinter
from kidym.simulation.compiled import CompiledSystem
from kidym.simulation.simulate import NumpySystem
from tests.codegen.shared import compiled, equations, kidym_cache  # noqa: F401
from tests.fixtures import DOUBLE_PENDULUM, ROOT, chain_text

FUNCTIONS_MODEL = """m = 1; k = 4; b = 0.3;
Slider | Sx(x) | m, 0, 0, 0;
Pf.x = (x > 0 ? -k*x ! -2*k*x) - b*atan2(x't, 1) + exp(-x^2) - sqrt(1 + x^2)/3
       - b*sign(x't)*abs(x't)^2 + 0.1*cos(x)^5/(2 + sin(x)^2);
"""

UNICODE_MODEL = """масса = 1.5; длина = 0.8; λ = 0.2; g = 9.81;
Стержень | Rz(φ) | Sx(длина/2), масса, 0, масса*длина^2/12, масса*длина^2/12;
Шар~Стержень | Sx(длина), Rz(ψ) | Sx(λ), масса, 0, λ, λ;
GRAVITY := 0, -g, 0;
"""


def _names(*names: str) -> dict[se.Symbol, str]:
    return {se.Symbol(n): n for n in names}


@pytest.mark.parametrize(("expr", "expected"), [
    ("a*b + c/d - sin(e)", (2, 1, 1, 1)),
    ("x**5", (0, 3, 0, 0)),            # x2 = x*x, x4 = x2*x2, x4*x
    ("1/(x*y) + sqrt(x)", (1, 1, 1, 1)),
    ("-a - b - c", (2, 0, 0, 0)),
    ("a/2", (0, 1, 0, 0)),              # multiplication by 0.5
    ("atan2(a, b)*cos(a)**2", (0, 2, 0, 2)),
])
def test_operation_counts_by_hand(expr, expected):
    e = se.sympify(expr)
    printer = CPrinter(lambda s: str(s))
    printer(e)
    c = printer.count
    assert (c.additions, c.multiplications, c.divisions, c.functions) == expected


def _agree(text: str, states: int = 4, seed: int = 1, p_override=None) -> None:
    eq = equations(text)
    cs = compiled(text)
    ns = NumpySystem.build(eq)
    p = cs.parameter_vector(p_override)
    rng = np.random.default_rng(seed)
    for _ in range(states):
        y = rng.uniform(-1, 1, len(cs.state_names))
        q1, M1, F1 = cs.evaluate(0.3, y, p)
        q2, M2, F2, _ = ns.evaluate(0.3, y, p)
        for a, b in ((q1, q2), (M1, M2), (F1, F2)):
            np.testing.assert_allclose(a, np.asarray(b, float), rtol=1e-12,
                                       atol=1e-12 * max(1.0, np.abs(b).max()))
        np.testing.assert_allclose(cs.rhs(0.3, y, p), ns.rhs(0.3, y, p), rtol=1e-12,
                                   atol=1e-12)


def test_functions_powers_and_piecewise_agree_with_numpy():
    _agree(FUNCTIONS_MODEL, states=8)


def test_unicode_names_become_safe_identifiers_with_the_original_in_comments():
    code = generate_c(equations(UNICODE_MODEL))
    assert code.source.isascii() is False          # the original names are in comments
    body = re.sub(r"/\*.*?\*/", "", code.source, flags=re.S)
    assert body.isascii()                          # the code itself is plain ASCII
    assert re.search(r"const double \w+ = .*;  /\* ωZШар \*/", code.source)
    _agree(UNICODE_MODEL)                         # and it compiles with -Wall -Werror


def test_source_is_deterministic_across_processes():
    script = ("import kidym, sys; from kidym.codegen import generate_c; "
              "sys.stdout.write(generate_c(kidym.derive(kidym.load("
              "'examples/biped/biped.kdm'))).source)")
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.append(subprocess.run([sys.executable, "-c", script], capture_output=True,
                                   text=True, env=env, check=True).stdout)
    assert outs[0] == outs[1] and "kidym_rhs" in outs[0]


def test_parameters_are_a_runtime_vector():
    """Changing a parameter needs no new library and matches the NumPy engine."""
    _agree(DOUBLE_PENDULUM, p_override={"l2": 1.7, "m1": 0.2, "g": 3.0})


def test_folded_parameters_agree_and_save_operations():
    eq = equations(DOUBLE_PENDULUM)
    folded = compiled(DOUBLE_PENDULUM, fold=True)
    runtime = compiled(DOUBLE_PENDULUM)
    p = runtime.parameter_vector()
    y = np.array([0.3, -1.1, 0.7, 0.2])
    np.testing.assert_allclose(folded.rhs(0, y, p), runtime.rhs(0, y, p), rtol=1e-13)
    assert folded.code.counts["rhs"].total <= runtime.code.counts["rhs"].total
    assert folded.code.counts["constants"].total == 0
    assert folded.code.n_constants == 0 and "p[" not in folded.code.source.split(
        "kd_eval")[1]
    with pytest.raises(ValueError, match="folded"):
        folded.parameter_vector({"g": 1.0})
    assert eq.n_w == 2


def test_hoisting_and_cse_lower_the_count_of_the_biped():
    eq = kidym.derive(kidym.load("examples/biped/biped.kdm"))
    plain = generate_c(eq, cse=False, hoist=False).counts["rhs"]
    best = generate_c(eq).counts["rhs"]
    assert best.multiplications < plain.multiplications
    assert best.functions <= plain.functions


def test_a_symbol_without_value_or_argument_is_named():
    eq = equations(DOUBLE_PENDULUM)
    with pytest.raises(ValueError, match="no value or argument for `mystery`"):
        generate_c(eq, outputs={"odd": se.Symbol("mystery") * 2})


def test_a_big_routine_split_into_parts_computes_the_same(monkeypatch, kidym_cache):  # noqa: F811
    """Parts (one translation unit each, compiled in parallel) pass values through a
    workspace: the right-hand side, ``M``, ``F`` and the outputs must be those of the
    same routines as one function to 1e-12 (without fused multiply-adds the two run the
    same operations, in another order of statements), and those of the NumPy engine."""
    emitter_module = importlib.import_module("kidym.codegen.emitter")
    eq = kidym.derive(kidym.parse(chain_text(6)))
    whole = CompiledSystem.build(eq, native=False)
    monkeypatch.setattr(emitter_module, "PART_STATEMENTS", 40)
    monkeypatch.setattr(emitter_module, "SPLIT_ABOVE", 40)
    code = generate_c(eq)
    assert len(code.parts) >= 3 and all("kidym_rhs_part" in x or "kidym_out_part" in x
                                         for x in code.parts)
    assert not whole.code.parts
    split = CompiledSystem.build(eq, native=False)
    assert split.code.parts == code.parts
    reference = NumpySystem.build(eq)
    rng = np.random.default_rng(11)
    for _ in range(10):
        y = rng.normal(size=split.n_y)
        p = split.parameter_vector() * rng.uniform(0.5, 2.0, len(code.parameter_names))
        np.testing.assert_allclose(split.rhs(0.3, y, p), whole.rhs(0.3, y, p),
                                   rtol=1e-12, atol=1e-12)
        for a, b in zip(split.evaluate(0.3, y, p), whole.evaluate(0.3, y, p)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(split.outputs_at(np.array([0.3]), y[None, :], p),
                                   whole.outputs_at(np.array([0.3]), y[None, :], p),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(split.rhs(0.3, y, p), reference.rhs(0.3, y, p),
                                   rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(split.outputs_at(np.array([0.3]), y[None, :], p)[0],
                                   reference.outputs(0.3, y, p), rtol=1e-11, atol=1e-11)


def test_long_sums_are_summed_in_parts(monkeypatch, kidym_cache):  # noqa: F811
    """A sum of more than SUM_TERMS terms (the 60-link chain's energy't has 10 000) is
    written as partial sums: the same values, no line longer than a few terms."""
    emitter_module = importlib.import_module("kidym.codegen.emitter")
    eq = kidym.derive(kidym.parse(chain_text(3)))
    plain = generate_c(eq)
    monkeypatch.setattr(emitter_module, "SUM_TERMS", 3)
    code = generate_c(eq)
    longest = max(len(line) for line in code.source.splitlines() if " = " in line)
    assert longest < max(len(line) for line in plain.source.splitlines() if " = " in line)
    assert "#" not in "".join(line for line in code.source.splitlines()
                              if not line.startswith(("#", " *", "/*")))
    summed = CompiledSystem.build(eq, native=False)
    assert summed.code.source == code.source
    reference = NumpySystem.build(eq)
    rng = np.random.default_rng(5)
    p = summed.parameter_vector()
    for _ in range(5):
        y = rng.normal(size=summed.n_y)
        np.testing.assert_allclose(summed.rhs(0.1, y, p), reference.rhs(0.1, y, p),
                                   rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(summed.outputs_at(np.array([0.1]), y[None, :], p)[0],
                                   reference.outputs(0.1, y, p), rtol=1e-11, atol=1e-11)


def test_the_dependency_order_keeps_a_value_near_its_uses():
    """Two independent chains written interleaved (a0 b0 a1 b1 …): cut in statement
    order every value would cross parts; in dependency order each chain is whole, its
    statements after those they need."""
    emitter_module = importlib.import_module("kidym.codegen.emitter")
    a = [se.Symbol(f"a{k}") for k in range(5)]
    b = [se.Symbol(f"b{k}") for k in range(5)]
    defined = [s for pair in zip(a, b) for s in pair] + [None, None]
    uses = ([{se.Symbol("q")}, {se.Symbol("q")}]
            + [u for k in range(1, 5) for u in ({a[k - 1]}, {b[k - 1]})] + [{a[4]}, {b[4]}])
    order = emitter_module.dependency_order(defined, uses)
    assert sorted(order) == list(range(len(defined)))
    assert [defined[i] for i in order] == [*a, None, *b, None]


def test_the_source_is_the_same_in_every_process():
    """Byte-identical C for the same model (the cache key): hoisted constants once were
    dummies whose hashes, and so SymEngine's order of terms, changed from run to run."""
    script = ("import hashlib, kidym, kidym.codegen.emitter as e\n"
              "from make_chain import chain_text\n"
              "e.PART_STATEMENTS = e.SPLIT_ABOVE = 40\n"
              "code = kidym.codegen.generate_c(kidym.derive(kidym.parse(chain_text(4))))\n"
              "print(hashlib.sha256('\\0'.join(code.sources).encode()).hexdigest())\n")
    eq = kidym.derive(kidym.parse(chain_text(4)))
    assert generate_c(eq).sources == generate_c(eq).sources
    digests = set()
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=300, cwd=ROOT,
                             env={**os.environ, "PYTHONHASHSEED": seed,
                                  "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'examples/chain'}"})
        assert run.returncode == 0, run.stderr[-1000:]
        digests.add(run.stdout.strip())
    assert len(digests) == 1
