"""The first-integral search of ``kidym check`` on hostile models (issue 27, the audit):
a force nesting ``sin`` 100 deep cost 54 s of CPU and 2 GB, a power ``x^1.5`` at a
random state with ``x < 0`` raised a TypeError (a complex number). Now the first is
skipped with a note before anything is generated, the second's states are passed over."""

from __future__ import annotations

import resource

import pytest

from kidym.analysis.integrals import MAX_OPERATIONS, first_integrals
from kidym.cli import main
from kidym.lang import parse

#: CPU seconds ``kidym check`` may take on these models (they take about one; the
#: deep one took 54 before the bound).
CPU_BOUND_S = 10.0


def _nested(depth: int) -> str:
    out = "x"
    for _ in range(depth):
        out = f"sin({out})"
    return out


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@pytest.mark.parametrize("depth", [100, 200])
def test_deep_nesting_is_not_searched_and_says_why(tmp_path, capsys, depth: int) -> None:
    path = tmp_path / "deep.kdm"
    path.write_text(f"m = 1;\nB | Sx({_nested(depth)}) | m(m);\n", encoding="utf-8")
    start = _cpu()
    assert main(["check", str(path)]) == 0
    assert _cpu() - start < CPU_BOUND_S
    out = capsys.readouterr().out
    assert f"first integrals: not searched (the candidates and their rates written out " \
           f"take over {MAX_OPERATIONS} operations" in out


def test_a_shallow_nesting_is_still_searched() -> None:
    """Below the bound the search runs: a point on a line with no force keeps its
    momentum (the only candidate it must find, closed form ``p = m ẋ_C``)."""
    found = first_integrals(parse(f"m = 1;\nB | Sx({_nested(5)}) | m(m);\n"))
    assert not found.skipped
    assert any(i.kind in ("momentum", "energy") for i in found)


def test_complex_values_at_random_states_are_passed_over(tmp_path, capsys) -> None:
    """``x^1.5`` is complex for ``x < 0``: those random states are skipped, the search
    ends in its own words (no TypeError)."""
    path = tmp_path / "power.kdm"
    path.write_text("m = 1;\nB | Sx(x) | m(m);\nPf.x = -x^1.5;\nINITIAL := x(1);\n",
                    encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert "first integrals:" in capsys.readouterr().out
