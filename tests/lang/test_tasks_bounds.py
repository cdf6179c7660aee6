"""``РАЗМНОЖИТЬ`` within bounds (issue 27, the audit): a huge count or a huge template
index is a located error found before anything is allocated, and the template index
formulas still compute what they say (checked against Python's integer arithmetic)."""

from __future__ import annotations

import resource

import pytest

from kidym.errors import ParseError
from kidym.lang import parse
from kidym.lang.tasks import MAX_COPIES

#: CPU seconds one of these files may take (each is refused or read in well under a
#: second; the audit's files took minutes and gigabytes).
CPU_BOUND_S = 10.0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _error(text: str) -> str:
    start = _cpu()
    with pytest.raises(ParseError) as e:
        parse(text)
    assert _cpu() - start < CPU_BOUND_S
    return e.value.render()


@pytest.mark.parametrize("last", ["100000000", "9" * 40, str(MAX_COPIES + 1)])
def test_a_huge_count_is_a_located_error(last: str) -> None:
    text = f"РАЗМНОЖИТЬ : i(1, {last});\nm$i = 1;\nB$i | Rz(x$i) | m(m$i), Jz(1);\n"
    out = _error(text)
    assert ":1:14: error: index `i` of `РАЗМНОЖИТЬ` takes" in out
    assert f"at most {MAX_COPIES} copies" in out


def test_the_largest_count_is_allowed() -> None:
    model = parse(f"РАЗМНОЖИТЬ : i(1, {MAX_COPIES});\nm$i = 1;\n")
    assert len(model.parameters) == MAX_COPIES


@pytest.mark.parametrize("index", ["9^9^10", "i^i^i^i^i", "10^10", "2^64", "i/0", "0^-1",
                                   "i/2", "i^-1"])
def test_a_huge_or_fractional_template_index_is_a_located_error(index: str) -> None:
    out = _error(f"РАЗМНОЖИТЬ : i(1, 3);\nm$i = 1;\nB$i | Rz(x$({index})) | m(m$i), "
                 "Jz(1);\n")
    assert "3:10: error: template `x$(" in out
    assert "must be a whole-number formula of the indices i" in out
    assert "replaced only by" not in out  # not also reported as a template left over


@pytest.mark.parametrize("index", ["2*i-1", "i^2 % 5", "i*i+10", "10 - -i",
                                   "2^i", "i*3/3"])
def test_template_indices_compute_their_formulas(index: str) -> None:
    text = f"РАЗМНОЖИТЬ : i(1, 4);\nm$i = 1;\nB$i | Sx(x$({index})) | m(m$i);\n"
    model = parse(text)
    py = index.replace("^", "**").replace("/", "//")
    want = {f"x{eval(py, {'i': i})}" for i in range(1, 5)}
    assert set(model.coordinates) == want
