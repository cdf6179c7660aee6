"""Where kidym keeps what it computes once per machine: compiled models
(:mod:`kidym.codegen.build`) and the parser tables of the model language
(:mod:`kidym.lang.parser`). Standard library only: ``kidym check`` reads it at start-up.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Where compiled models are kept: ``$KIDYM_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/kidym``, else ``~/.cache/kidym``."""
    env = os.environ.get("KIDYM_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kidym"
