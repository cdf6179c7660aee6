"""The compiled build's stages, each wrapped by the caller's context manager."""

from __future__ import annotations

import io
from contextlib import contextmanager

import kidym
from kidym.progress import VERBOSE, Reporter
from kidym.simulation.compiled import CompiledSystem

PENDULUM = """\
CALCULATION := DYNAMICS;
m = 1.5; l = 0.7; g = 9.81;
Rod | Rx(phi) | Sz(-l/2), m(m), Jx(m*l^2/12), Jy(m*l^2/12), Jz(0);
GRAVITY := 0, 0, -g;
INITIAL := t(0), phi(0.4);
TIME := t(0, 1);
"""


def test_cold_and_cached_builds_report_their_stages(tmp_path, monkeypatch):
    monkeypatch.setenv("KIDYM_CACHE_DIR", str(tmp_path / "cache"))
    eq = kidym.derive(kidym.parse(PENDULUM))
    seen: list[str] = []

    @contextmanager
    def stage(label: str):
        seen.append(label)
        yield

    CompiledSystem.build(eq, stage=stage)
    assert seen == ["cache key", "generating C", "compiling", "loading"]
    # a cached start neither generates nor compiles; a Reporter times each stage
    stream = io.StringIO()
    CompiledSystem.build(eq, stage=Reporter(VERBOSE, stream=stream, tty=False).stage)
    assert [line.split(":")[0] for line in stream.getvalue().splitlines()] == [
        "cache key", "loading"]
