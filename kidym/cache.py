"""Where kidym keeps what it computes once per machine: compiled models
(:mod:`kidym.codegen.build`), the parser tables of the model language
(:mod:`kidym.lang.parser`), and the parsed models and derived equations of model
files (:func:`read_stored`, :func:`write_stored`; :mod:`kidym.eom.stored`). Standard
library only: ``kidym check`` reads it at start-up.

What is in the cache is loaded and run (a library's constructor runs when it is
loaded; the parser tables are a pickle), so the folder must be the user's own: it is
created private (mode 0700), and one that another user owns or others may write to is
refused (:func:`private_cache_dir`).
"""

from __future__ import annotations

import contextlib
import copyreg
import functools
import hashlib
import hmac
import io
import os
import pickle
import stat
import sys
import weakref
from pathlib import Path
from types import MappingProxyType

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


def cache_secret(folder: Path) -> bytes:
    """The cache's secret (32 random bytes in ``folder/secret``, mode 0600), made once;
    what the cache loads and runs is authenticated with it (HMAC-SHA-256)."""
    path = folder / "secret"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    tmp = folder / f".secret-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):   # left by a killed process of this pid
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(32))
    try:
        os.link(tmp, path)        # the first process to publish one wins; all read it
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return path.read_bytes()


@functools.cache
def code_fingerprint() -> str:
    """A hash of kidym's own source (every ``.py``, ``.c`` and ``.lark`` file of the
    package) and of the Python and SymEngine versions: what is stored under it
    (:func:`write_stored`) is found again only by the same code. A few milliseconds."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256(sys.version.encode() + b"\0")
    symengine = sys.modules.get("symengine")
    if symengine is None:
        import importlib.metadata

        try:
            h.update(importlib.metadata.version("symengine").encode())
        except importlib.metadata.PackageNotFoundError:   # pragma: no cover
            pass
    else:
        h.update(str(getattr(symengine, "__version__", "")).encode())
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".c", ".lark") and "__pycache__" not in path.parts:
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _mapping_proxy(items: dict) -> MappingProxyType:
    """A read-only view of ``items`` (how a pickled ``MappingProxyType`` is rebuilt)."""
    return MappingProxyType(items)


_DISPATCH = {**copyreg.dispatch_table,
             MappingProxyType: lambda view: (_mapping_proxy, (dict(view),))}


def _stored_path(kind: str, key: str) -> Path:
    return private_cache_dir() / "stored" / f"{kind}-{key[:40]}.pickle"


def read_stored(kind: str, key: str) -> object | None:
    """What :func:`write_stored` stored under ``kind`` and ``key`` in this user's cache,
    or ``None``: not stored, damaged, not written by this user's kidym (its HMAC under
    :func:`cache_secret` does not match), or no private cache. A pickle, so it is
    unpickled only once authenticated."""
    try:
        path = _stored_path(kind, key)
        data = path.read_bytes()
    except (OSError, CacheError):
        return None
    digest, payload = data[:64], data[64:]
    expected = hmac.new(cache_secret(path.parents[1]), path.name.encode() + b"\0" + payload,
                        "sha256").hexdigest().encode("ascii")
    if not hmac.compare_digest(digest, expected):
        return None
    try:
        return pickle.loads(payload)
    except Exception:   # (written by this kidym's code; a damaged file: rebuild)
        return None


def write_stored(kind: str, key: str, value: object) -> bool:
    """Store ``value`` (pickled, authenticated by an HMAC under :func:`cache_secret`)
    under ``kind`` and ``key``, published by an atomic rename so that a parallel reader
    sees the whole file or none. Whether it was stored: ``False`` where the value cannot
    be pickled or the cache cannot be written (the caller goes on without it)."""
    try:
        path = _stored_path(kind, key)
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.dispatch_table = _DISPATCH
        pickler.dump(value)
        payload = buffer.getvalue()
        path.parent.mkdir(mode=0o700, exist_ok=True)
        digest = hmac.new(cache_secret(path.parent.parent),
                          path.name.encode() + b"\0" + payload, "sha256").hexdigest()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(digest.encode("ascii") + payload)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    except (OSError, CacheError, pickle.PicklingError, TypeError, AttributeError,
            RecursionError):
        return False
    return True


#: Objects made from a known source (a model from a file's text, equations from such a
#: model), by ``id``, with a weak reference to the very object and its source's key.
_SOURCES: dict[int, tuple[weakref.ref, str]] = {}


def stored_as_read(kind: str, key: str, value: object) -> object:
    """Store ``value`` (:func:`write_stored`) and return it as a later process will read
    it back: the unpickled copy. SymEngine orders the terms of a sum it unpickles in
    its own way, so a first run that went on with ``value`` itself would generate C
    (and round) differently from every run after it; with the copy, the first run and
    the cached ones are the same computation. ``value`` itself where it cannot be
    stored."""
    if not write_stored(kind, key, value):
        return value
    again = read_stored(kind, key)
    return value if again is None else again


def remember_source(obj: object, key: str) -> None:
    """Record that ``obj`` (this very object, not an equal one) was made from the
    source hashed as ``key`` (:func:`source_key`)."""
    ident = id(obj)

    def forget(ref: weakref.ref, ident: int = ident) -> None:
        if _SOURCES.get(ident, (None,))[0] is ref:
            del _SOURCES[ident]

    _SOURCES[ident] = (weakref.ref(obj, forget), key)


def source_key(obj: object) -> str | None:
    """The key :func:`remember_source` gave ``obj``, or ``None`` (made otherwise: by
    the Python API, or changed by ``dataclasses.replace``, which makes a new object)."""
    entry = _SOURCES.get(id(obj))
    return entry[1] if entry is not None and entry[0]() is obj else None
