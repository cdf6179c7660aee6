"""Shared by the compiled-engine tests: one library cache per test session.

Compiling is the slow part, so every test module uses the same cache directory
(under pytest's session temporary directory) and the same in-process builds.
"""

from __future__ import annotations

import functools
import os

import pytest

import kidym
from kidym.simulate.compiled import CompiledSystem


@pytest.fixture(scope="session", autouse=True)
def kidym_cache(tmp_path_factory):
    """Point ``KIDYM_CACHE_DIR`` at one directory for the whole session."""
    path = tmp_path_factory.getbasetemp() / "kidym-cache"
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
