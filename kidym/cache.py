"""Where kidym keeps what it computes once per machine: compiled models
(:mod:`kidym.codegen.build`) and the parser tables of the model language
(:mod:`kidym.lang.parser`). Standard library only: ``kidym check`` reads it at start-up.

What is in the cache is loaded and run (a library's constructor runs when it is
loaded; the parser tables are a pickle), so the folder must be the user's own: it is
created private (mode 0700), and one that another user owns or others may write to is
refused (:func:`private_cache_dir`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: ``KIDYM_CACHE_DIR`` values made absolute when first seen: a relative one names the
#: same folder however the working directory changes later (a build compiles in a
#: folder of its own).
_ABSOLUTE: dict[str, Path] = {}


class CacheError(PermissionError):
    """The cache folder is not private to the user (owned by another, or writable by
    others)."""


def cache_dir() -> Path:
    """Where compiled models are kept, as an absolute path: ``$KIDYM_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/kidym``, else ``~/.cache/kidym``."""
    env = os.environ.get("KIDYM_CACHE_DIR")
    if env:
        if env not in _ABSOLUTE:
            _ABSOLUTE[env] = Path(env).expanduser().absolute()
        return _ABSOLUTE[env]
    xdg = os.environ.get("XDG_CACHE_HOME")
    return ((Path(xdg) if xdg else Path.home() / ".cache") / "kidym").absolute()


def private_cache_dir() -> Path:
    """:func:`cache_dir`, created with mode 0700 if missing, checked to be the user's own.

    Raises
    ------
    CacheError
        If the folder (or the link it is) belongs to another user, or others than its
        owner may write to it; the message says what to do.
    """
    path = cache_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not hasattr(os, "getuid"):   # pragma: no cover (no POSIX owners)
        return path
    st = path.stat()
    why = None
    if st.st_uid != os.getuid():
        why = f"it belongs to another user (uid {st.st_uid}, you are {os.getuid()})"
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        why = f"others may write to it (mode {stat.S_IMODE(st.st_mode):o})"
    if why:
        raise CacheError(f"the kidym cache {path} is not private: {why}, and what is in it "
                         f"is loaded and run. Use a folder of your own (set KIDYM_CACHE_DIR), "
                         f"or make it yours: chmod 700 {path}")
    return path
