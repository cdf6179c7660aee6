"""What the ``kidym`` commands share: the model file read once, ``NAME=VALUE`` options,
the progress reporter (standard library only: ``kidym --help`` imports it)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path


def pairs(items: Sequence[str] | None, what: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"kidym: error: {what} expects NAME=VALUE, got `{item}`")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise SystemExit(f"kidym: error: {what} {name.strip()}: `{value}` is not a "
                             "number") from None
    return out


#: The model file read last, by its path and content: a command that asks for the
#: calculation type and then for the model parses its file once (a file changed since,
#: even within the same clock tick, is parsed again).
READ: dict[tuple, tuple] = {}


def input_tables(items: Sequence[str] | None) -> dict[str, object]:
    """``--input NAME=FILE.csv``: the tables, read (a bad file is a one-line error)."""
    from kidym.simulation.inputs import InputTable

    out: dict[str, object] = {}
    for item in items or ():
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise SystemExit(f"kidym: error: --input expects NAME=FILE.csv, got `{item}`")
        try:
            out[name.strip()] = InputTable.read_csv(path.strip())
        except ValueError as exc:
            raise SystemExit(f"kidym: error: --input {name.strip()}: {exc}") from None
    return out


def read(path: str):
    """The first task of ``path`` and its warnings (see :data:`READ`)."""
    tasks, warnings = read_tasks(path)
    return tasks[0], warnings


def read_tasks(path: str):
    """Every task of ``path`` (one model each) and the warnings (see :data:`READ`)."""
    import hashlib

    from kidym.lang import load_tasks as load_file_tasks

    data = Path(path).read_bytes()
    key = (os.path.realpath(path), hashlib.sha256(data).hexdigest())
    if key not in READ:
        warnings: list = []
        # (as kidym.lang.load, from the bytes hashed; stored in the cache by the bytes)
        tasks = load_file_tasks(path, warnings=warnings, data=data)
        READ.clear()
        READ[key] = (tasks, warnings)
    return READ[key]


def load(path: str, *, quiet: bool = False):
    return load_tasks(path, quiet=quiet)[0]


def load_tasks(path: str, *, quiet: bool = False) -> list:
    """Every task of a dynamics file (``КОНЕЦ;`` ends a task), its warnings printed.

    The tasks must share one calculation (a file mixing, say, ДИНАМИКА and СТАТИКА
    tasks is an error naming them): each command runs every task, as in a
    kinematics file, and one kind of output serves them all."""
    tasks, warnings = read_tasks(path)
    if warnings and not quiet:
        src = tasks[0].source
        for w in warnings:
            print(w.format(path, src), file=sys.stderr)
    kinds = [m.calculation or "DYNAMICS" for m in tasks]
    if len(set(kinds)) > 1:
        raise ValueError(f"{path}: its {len(tasks)} tasks have different calculations ("
                         + ", ".join(f"{m.name}: {k}" for m, k in zip(tasks, kinds))
                         + "); kidym runs every task of a file with one calculation: put "
                         "the others in files of their own")
    return tasks


def reporter(args: argparse.Namespace):
    from kidym.progress import NORMAL, QUIET, VERBOSE, Reporter

    level = (QUIET if getattr(args, "quiet", False)
             else VERBOSE if getattr(args, "verbose", False) else NORMAL)
    return Reporter(level)
