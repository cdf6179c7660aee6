"""Shared by the compiled-engine tests: one library cache per test session.

Compiling is the slow part, so every test module uses the same cache directory
(under pytest's session temporary directory, shared by the pytest-xdist workers) and
the same in-process builds.
"""

from __future__ import annotations

import functools
import os

import pytest

import kidym
from kidym.simulation.compiled import CompiledSystem


@pytest.fixture(scope="session", autouse=True)
def kidym_cache(tmp_path_factory):
    """Point ``KIDYM_CACHE_DIR`` at one directory for the whole session.

    Under pytest-xdist the workers share it (it is in the run's temporary directory,
    the parent of each worker's own): a model is compiled once per run, not once per
    worker, as in a run in one process; two workers building one library at once is
    the concurrent use of a cache that :mod:`kidym.codegen.build` makes safe."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    path = base / "kidym-cache"
    path.mkdir(exist_ok=True)
    old = os.environ.get("KIDYM_CACHE_DIR")
    os.environ["KIDYM_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("KIDYM_CACHE_DIR", None)
    else:
        os.environ["KIDYM_CACHE_DIR"] = old


@functools.cache
def equations(text: str) -> kidym.Equations:
    """Derived equations of a model text (memoised)."""
    return kidym.derive(kidym.parse(text))


@functools.cache
def compiled(text: str, events: tuple = (), fold: bool = False) -> CompiledSystem:
    """The compiled system of a model text (memoised; the library is cached on disk)."""
    return CompiledSystem.build(equations(text), events=events, fold=fold)
