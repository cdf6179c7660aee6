"""Huge counts on the command line are refused before anything is allocated (issue 27,
the audit: ``--points 300000000``, ``sweep --vary …:100000000`` and ``--samples
1000000000`` died with MemoryError tracebacks). Each refusal must come at once: the
test bounds the peak memory of the process well below what the count would take."""

from __future__ import annotations

import resource

import pytest

from kidym.cli import main
from kidym.cli_types import MAX_POINTS
from kidym.study.design import MAX_RUNS
from tests.fixtures import EXAMPLES

PENDULUM = str(EXAMPLES / "double_pendulum" / "double_pendulum.kdm")
MODES = str(EXAMPLES / "double_pendulum" / "double_pendulum_modes.kdm")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize(("argv", "message"), [
    (["run", PENDULUM, "--points", "300000000"],
     f"the number of output times must be from 1 to {MAX_POINTS}, got 300000000"),
    (["sweep", PENDULUM, "--points", "300000000", "--vary", "m1=1:2:3"],
     "the number of output times must be from 1 to"),
    (["sweep", PENDULUM, "--vary", "m1=1:2:100000000"],
     f"--vary m1: the count is 100000000; a study holds at most {MAX_RUNS} runs"),
    (["sweep", PENDULUM, "--vary", "m1=1:2:2000", "--vary", "m2=1:2:2000"],
     "the number of runs of the grid (2000 × 2000) is 4000000"),
    (["sweep", PENDULUM, "--vary", "m1=1:2", "--samples", "1000000000"],
     "the number of samples is 1000000000; a study holds at most"),
    (["modes", MODES, "--vary", "m1=1:2:100000000"],
     "--vary m1: the count must be from 1 to 100000, got 100000000"),
])
def test_a_huge_count_is_refused_before_allocating(tmp_path, capsys, argv, message) -> None:
    before = _peak_mb()
    try:
        status = main([*argv, *(["--out", str(tmp_path / "o")] if argv[0] != "modes" else [])])
    except SystemExit as e:   # argparse's own refusal
        status = e.code
    assert status in (1, 2)
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err
    # a float per point or run would be 800 MB at the smallest of these counts
    assert _peak_mb() - before < 200
