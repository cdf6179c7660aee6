"""Output directories that are published whole: a run's files, or the previous run's.

Every command that writes a directory (``kidym run``, ``kidym animate --out``,
``kidym codegen``) writes all of it into a private *staging* directory beside the
target — ``.NAME.kidym-new-XXXXXXXX``, on the same file system — flushes every file
and directory to disk, and then puts it in place of the target:

* on Linux, with one atomic ``renameat2(RENAME_EXCHANGE)`` of the two directories,
  so that at every moment the target is the complete old run or the complete new
  one; the old run, now under the staging name, is then removed;
* elsewhere (or on a file system without the exchange), with two renames — the old
  directory aside to ``.NAME.kidym-old-XXXXXXXX``, the new one in — so that a kill
  between them leaves the two complete runs under those names and no target.

A kill at any moment leaves at most such clearly named leftovers; the next
publication into the same target removes them (a staging directory still in use by
a live process is locked, ``flock``, and left alone).

A directory made this way holds :data:`MARKER`, ``kidym-run.json``: the run id, the
command and the list of its files. Only such a directory, holding nothing but those
files, is replaced without asking; anything else (files kidym did not write, a
directory of an older kidym without the marker) is refused unless ``force=True``
(``--force``), because replacing it deletes what it holds. The working directory,
the home directory, the file system root, their ancestors and a directory holding a
file the command reads (the model) are never replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import errno
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

try:  # POSIX: a live staging directory is locked and never removed by another run
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: The marker file of a directory made by kidym (JSON: run id, command, files).
MARKER = "kidym-run.json"
_NEW, _OLD = ".kidym-new-", ".kidym-old-"
#: Without ``flock`` a leftover is taken as abandoned once it is this old (seconds).
_ABANDONED_AFTER = 24 * 3600.0


@dataclass
class Staging:
    """A run's output being written: write into :attr:`path`; it becomes :attr:`out`.

    Attributes
    ----------
    path : Path
        The private staging directory to write into.
    out : Path
        The directory it will replace when the ``with`` block of :func:`staged` ends
        without an exception.
    run_id : str
        The id of this run, recorded in :data:`MARKER` (and by ``Result.write`` in
        ``results.json``).
    command : str
        What made the directory (recorded in :data:`MARKER`).
    """

    path: Path
    out: Path
    run_id: str
    command: str
    cancelled: bool = field(default=False, init=False)

    def final(self, path: str | Path) -> Path:
        """Where ``path`` (a file under :attr:`path`) will be once published."""
        return self.out / Path(path).relative_to(self.path)

    def cancel(self) -> None:
        """Publish nothing: the staging directory is removed, the target left as it is."""
        self.cancelled = True


def new_run_id() -> str:
    """A fresh run id (32 hex digits)."""
    return uuid.uuid4().hex


def check_replaceable(out: str | Path, *, force: bool = False,
                      keep: Iterable[str | Path] = ()) -> None:
    """Raise unless a run may put its output in place of ``out``.

    Parameters
    ----------
    out : path
        The output directory (it need not exist).
    force : bool
        Replace a directory that holds files kidym did not write (they are deleted).
    keep : paths
        Files or directories the command reads (the model, a results directory):
        ``out`` must be none of them and hold none of them.

    Raises
    ------
    FileExistsError
        ``out`` is not a directory, or holds files that no kidym run wrote and
        ``force`` is false; the message names a few of them and says what to do.
    PermissionError
        ``out`` is, or holds, the working directory, the home directory, the file
        system root, or one of ``keep`` (never replaced, not even with ``force``).
    """
    out = Path(out)
    real = Path(os.path.realpath(out))
    protected = [("the working directory", Path.cwd().resolve()),
                 ("the file system root", Path(real.anchor))]
    with contextlib.suppress(RuntimeError, KeyError):
        protected.append(("the home directory", Path.home().resolve()))
    for what, p in protected:
        if real == p or real in p.parents:
            raise PermissionError(f"refusing to use `{out}` as the output directory: a run "
                                  f"replaces it whole, and it is or holds {what} `{p}`; give "
                                  "--out a directory of its own (e.g. --out kidym-out/NAME)")
    for k in keep:
        kr = Path(os.path.realpath(k))
        if real == kr or real in kr.parents:
            raise PermissionError(f"refusing to use `{out}` as the output directory: a run "
                                  f"replaces it whole, and it is or holds `{k}`, which this "
                                  "command reads; choose another --out")
    if not os.path.lexists(real):
        return
    if not real.is_dir():
        raise FileExistsError(f"`{out}` exists and is not a directory; choose another --out "
                              "or remove it")
    foreign = foreign_files(real)
    if foreign and not force:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more"
                                          if len(foreign) > 5 else "")
        why = ("it has no kidym-run.json marker, so it was not made by this kidym (an older "
               "kidym's output has none either)" if not (real / MARKER).is_file() else
               "they are not files of the kidym run it holds")
        raise FileExistsError(
            f"`{out}` holds files kidym did not write ({shown}): {why}. A run replaces its "
            "output directory whole; give --force to replace it (deleting those files), or "
            "choose another --out")


def foreign_files(directory: str | Path) -> list[str]:
    """Paths under ``directory`` (relative, ``/``-separated, sorted) that are not files
    of the kidym run recorded in its :data:`MARKER` — every path when it has none."""
    directory = Path(directory)
    listed = set(_marker(directory).get("files", ()))
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        rel = Path(root).relative_to(directory)
        for d in dirs:
            if os.path.islink(os.path.join(root, d)):  # kidym never writes links
                found.append((rel / d).as_posix())
        for f in files:
            name = (rel / f).as_posix()
            if name != MARKER and name not in listed:
                found.append(name)
    return sorted(found)


def _marker(directory: Path) -> dict:
    try:
        doc = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) and isinstance(doc.get("files", []), list) else {}


def add_to_run(directory: str | Path, name: str) -> None:
    """Record ``name`` as a file of the kidym run in ``directory`` (before writing it),
    so that a later run still replaces the directory without ``--force``."""
    from kidym.simulation.result import write_atomically

    directory = Path(directory)
    doc = _marker(directory)
    if not doc or name in doc["files"]:
        return
    doc["files"] = sorted({*doc["files"], name})
    write_atomically(directory / MARKER, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


@contextlib.contextmanager
def staged(out: str | Path, *, force: bool = False, command: str = "kidym",
           keep: Iterable[str | Path] = ()) -> Iterator[Staging]:
    """Write a directory whole: yield a :class:`Staging`, then publish it at ``out``.

    Parameters
    ----------
    out : path
        The output directory to create or replace.
    force, keep
        As :func:`check_replaceable` (checked before and again at publication).
    command : str
        Recorded in the marker.

    Yields
    ------
    Staging
        Write every file under ``staging.path``.

    Raises
    ------
    FileExistsError, PermissionError
        As :func:`check_replaceable`; nothing is written.

    Notes
    -----
    An exception in the ``with`` block (or :meth:`Staging.cancel`) removes the
    staging directory and leaves ``out`` as it was.
    """
    out = Path(out)
    keep = tuple(keep)
    check_replaceable(out, force=force, keep=keep)
    real = Path(os.path.realpath(out))
    real.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(real)
    path = Path(tempfile.mkdtemp(prefix=f".{real.name}{_NEW}", dir=real.parent))
    lock = _lock(path)
    stage = Staging(path=path, out=out, run_id=new_run_id(), command=command)
    try:
        yield stage
        if stage.cancelled:
            return
        files = sorted((Path(r).relative_to(path) / f).as_posix()
                       for r, _, fs in os.walk(path) for f in fs)
        marker = {"kidym": _version(), "run_id": stage.run_id, "command": command,
                  "created": datetime.datetime.now(datetime.UTC).isoformat(
                      timespec="seconds"), "files": files}
        from kidym.simulation.result import write_atomically

        write_atomically(path / MARKER, json.dumps(marker, ensure_ascii=False, indent=2)
                         + "\n")
        os.chmod(path, 0o777 & ~_umask())  # mkdtemp makes 0700; outputs are ordinary
        _fsync_tree(path)
        check_replaceable(out, force=force, keep=keep)  # something may have come meanwhile
        _publish(path, real)
    finally:
        if lock is not None:
            os.close(lock)
        shutil.rmtree(path, ignore_errors=True)


def remove_leftovers(out: str | Path) -> list[Path]:
    """Remove the staging and set-aside directories that killed runs left beside ``out``.

    Returns
    -------
    list of Path
        The directories removed (one still locked by a live run is left alone).
    """
    out = Path(out)
    removed = []
    heads = tuple(f".{out.name}{prefix}" for prefix in (_NEW, _OLD))
    try:
        entries = list(os.scandir(out.parent))
    except OSError:
        return removed
    for e in entries:
        if e.name.startswith(heads) and e.is_dir(follow_symlinks=False):
            p = Path(e.path)
            if _abandoned(p):
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p)
    return removed


def _lock(path: Path) -> int | None:
    if fcntl is None:  # pragma: no cover - not POSIX
        return None
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _abandoned(path: Path) -> bool:
    if fcntl is None:  # pragma: no cover - not POSIX
        import time

        return time.time() - path.stat().st_mtime > _ABANDONED_AFTER
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a live run holds it
    finally:
        os.close(fd)
    return True


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform that cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - a file system that cannot sync directories
        pass
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    """Flush the directory entries of ``path`` and below (files are flushed as written)."""
    for root, _, _ in os.walk(path, topdown=False):
        _fsync_dir(Path(root))


def _publish(stage: Path, out: Path) -> None:
    """Put ``stage`` in place of ``out``; afterwards ``stage`` holds nothing to keep."""
    if os.path.lexists(out) and exchange(stage, out):
        _fsync_dir(out.parent)
        return  # stage now holds the old run; the caller removes it
    if os.path.lexists(out):
        aside = out.parent / stage.name.replace(_NEW, _OLD, 1)
        os.rename(out, aside)
        try:
            os.rename(stage, out)
        except OSError:
            with contextlib.suppress(OSError):
                os.rename(aside, out)  # put the old run back
            raise
        _fsync_dir(out.parent)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.rename(stage, out)
        _fsync_dir(out.parent)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: str | Path, b: str | Path) -> bool:
    """Swap the directories ``a`` and ``b`` atomically (Linux ``renameat2``).

    Returns
    -------
    bool
        False where the system or the file system cannot (nothing was changed).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    fn.restype = ctypes.c_int
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, f"cannot put the new output in place of `{b}`: {os.strerror(err)}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _version() -> str:
    from kidym import __version__

    return __version__
