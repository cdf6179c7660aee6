"""``kidym run`` parses its model file once (``cli._read``), and never reuses the parse
of a file that changed since, even at the same size and modification time."""

from __future__ import annotations

import os

from kidym import cli
from kidym.lang import load

TEXT = "m = 1; c = {c}; Jm.x = m; Cs.x = c; НАЧАЛЬНЫЕ УСЛОВИЯ := t(0), x(0.5), x't(0);\n"


def test_a_changed_file_is_parsed_again(tmp_path):
    path = tmp_path / "osc.kdm"
    path.write_text(TEXT.format(c=4), encoding="utf-8")

    first = cli._load(str(path))
    assert cli._calculation(str(path)) == first.calculation
    assert cli._load(str(path)) is first   # one parse for the three questions
    stamp = os.stat(path).st_mtime_ns
    path.write_text(TEXT.format(c=9), encoding="utf-8")   # same size
    os.utime(path, ns=(stamp, stamp))                      # same time
    second = cli._load(str(path))
    assert second is not first
    assert second.parameter_values["c"] == 9 == load(path).parameter_values["c"]
    assert first.parameter_values["c"] == 4
