"""What a Dask worker needs to run a study: the model's text and its compiled library.

A :class:`Package` is sent once to every worker (``Client.scatter(…, broadcast=True)``).
A worker re-reads the model from its text and derives its equations (the equations are
SymEngine graphs, not sent over the wire), then takes the library, in this order:

1. from its cache directory (``$KIDYM_CACHE_DIR``, :mod:`kidym.cache`): a cache shared
   by the client and the workers — the same machine, or a shared file system — is a
   hit, and nothing is compiled;
2. from the bytes shipped in the package, when the worker's processor is the one the
   library was tuned for (``-march=native``; :func:`kidym.codegen.build.cpu_fingerprint`)
   and the bytes have their SHA-256: written to a private file and loaded;
3. else built there (the worker needs a C compiler and SUNDIALS then).

Each worker process does this once per package (:data:`_SYSTEMS`).

Ctrl-C on the client sets a ``distributed.Event`` named by the jobs (:attr:`Job.stop`);
a task listens for it in a thread of its own while its runs go on, and stops them as
Ctrl-C stops a local run (the run in progress where it is, partial; those not begun
not run): the client gets their results back at once. The client clears the event
when the sweep ends (a set event would stay on the scheduler), so a task it cancelled
and that still runs stops on seeing its own cancellation.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from kidym.codegen.emit import CCode
from kidym.simulation.compiled import CompiledSystem
from kidym.study.runs import Job, JobOutput, run_job


@dataclass(frozen=True, eq=False)
class Package:
    """The model and its library, as shipped to the workers.

    Attributes
    ----------
    source, filename, name : str
        The model's text, its file name (for messages) and its model name.
    task : int or None
        The task of a multi-task file (index into :func:`kidym.lang.parse_tasks`, the
        tasks named after ``name``'s stem), ``None`` for a single task.
    jacobian : bool
        Whether the library has the analytic Jacobian (``BDF``).
    code : CCode
        The generated C and its layout.
    library : bytes
        The shared library's bytes.
    sha256 : str
        Their SHA-256 (also the package's identity on a worker).
    cpu : str
        The processor fingerprint the library was built on.
    key : str
        The library's key in the cache index (:func:`kidym.codegen.index.equations_key`
        of the client's equations): a worker sharing the cache finds the very library
        by it, whatever order its own parse gives the terms of a sum (``""``: none).
    """

    source: str
    filename: str
    name: str
    task: int | None
    base: str
    jacobian: bool
    code: CCode
    library: bytes
    sha256: str
    cpu: str
    key: str = ""


def package(system: CompiledSystem) -> Package:
    """The :class:`Package` of a compiled system built from a model file's text.

    Raises
    ------
    ValueError
        If the model was not read from text (a model built in Python has no source to
        send to the workers).
    """
    from kidym.codegen.build import cpu_fingerprint
    from kidym.lang.parser import parse_tasks

    model = system.equations.model
    if model.source is None:
        raise ValueError(f"model `{model.name}` has no source text to send to the Dask "
                         "workers: read it with kidym.load or kidym.parse")
    task, base = None, model.name
    tasks = parse_tasks(model.source, filename=model.filename, name=model.name)
    if len(tasks) > 1:
        base, _, k = model.name.rpartition("_")
        tasks = parse_tasks(model.source, filename=model.filename, name=base)
        task = int(k) - 1 if k.isdigit() else -1
        if not 0 <= task < len(tasks) or tasks[task].name != model.name:
            raise ValueError(f"model `{model.name}` is not a task of its file as read again")
    from kidym.codegen import index
    from kidym.codegen.build import BASE_FLAGS, build_flags

    data = Path(system.path).read_bytes()
    key = index.equations_key(system.equations, flags=build_flags(BASE_FLAGS),
                              jacobian=system.has_jacobian)
    return Package(model.source, model.filename, model.name, task, base,
                   system.has_jacobian, system.code, data, hashlib.sha256(data).hexdigest(),
                   cpu_fingerprint(), key)


#: The compiled system of each package this process has seen, and how it was obtained.
_SYSTEMS: dict[str, tuple[CompiledSystem, str]] = {}
_LOCK = threading.Lock()
_SHIPPED_DIRS: list[str] = []


def _cleanup() -> None:
    for d in _SHIPPED_DIRS:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def system_of(pkg: Package) -> tuple[CompiledSystem, str]:
    """The compiled system of ``pkg`` in this process and its route (``"cache"``,
    ``"shipped"`` or ``"built"``); see the module's docstring."""
    with _LOCK:   # a worker's threads share one system
        if pkg.sha256 not in _SYSTEMS:
            _SYSTEMS[pkg.sha256] = _load(pkg)
        return _SYSTEMS[pkg.sha256]


def _load(pkg: Package) -> tuple[CompiledSystem, str]:
    from kidym.codegen import index
    from kidym.codegen.build import BASE_FLAGS, build_flags, cpu_fingerprint
    from kidym.eom.equations import derive
    from kidym.lang.parser import parse, parse_tasks
    from kidym.model.display import meshes_not_read

    with meshes_not_read():   # (a worker draws nothing: its folder may not hold them)
        if pkg.task is None:
            model = parse(pkg.source, filename=pkg.filename, name=pkg.name)
        else:
            model = parse_tasks(pkg.source, filename=pkg.filename, name=pkg.base)[pkg.task]
    eq = derive(model)
    hit = index.lookup(pkg.key) if pkg.key else None
    if hit is not None:   # the client's very library, in the cache this worker shares
        code, path = hit
        if code.sources == pkg.code.sources:
            return CompiledSystem.from_library(eq, code, path), "cache"
    key = index.equations_key(eq, flags=build_flags(BASE_FLAGS), jacobian=pkg.jacobian)
    if index.lookup(key) is not None:
        return CompiledSystem.build(eq, jacobian=pkg.jacobian), "cache"
    if pkg.cpu == cpu_fingerprint() and hashlib.sha256(pkg.library).hexdigest() == pkg.sha256:
        where = tempfile.mkdtemp(prefix="kidym-shipped-")
        _SHIPPED_DIRS.append(where)
        path = Path(where) / f"{pkg.sha256[:24]}.so"
        path.write_bytes(pkg.library)
        os.chmod(path, 0o500)
        return CompiledSystem.from_library(eq, pkg.code, path), "shipped"
    return CompiledSystem.build(eq, jacobian=pkg.jacobian), "built"


#: How long a task's listener waits for the stop at a time (seconds): it returns at once
#: when the event is set, so this is only how often it checks that the task still runs.
STOP_POLL_S = 0.2


def run_on_worker(pkg: Package, job: Job) -> JobOutput:
    """The Dask task: :func:`kidym.study.runs.run_job` with the worker's system, its runs
    stopped where they are when the client sets the event ``job.stop``."""
    system, route = system_of(pkg)
    if not job.stop:
        return run_job(system, job, route=route)
    from distributed import Event, get_client, get_worker

    from kidym.progress import Reporter
    from kidym.simulation.watch import Watch, watching

    watch = Watch(Reporter(0, tty=False))
    # (the worker's client, named: the listener's thread is not the task's)
    event = Event(job.stop, client=get_client())
    finished = threading.Event()
    worker = get_worker()
    key = worker.get_current_task()

    def cancelled() -> bool:
        """The client cancelled this task (it keeps running on the worker until it
        returns): after a stop, once the client has cleared the event."""
        task = worker.state.tasks.get(key)
        return task is None or task.state == "cancelled"

    def listen() -> None:
        while not finished.is_set():
            try:
                if event.wait(timeout=STOP_POLL_S) or cancelled():
                    watch.stop()
                    return
            except Exception:   # (the scheduler gone: nothing left to listen to)
                return

    if event.is_set() or cancelled():   # (a task begun after the stop: not run)
        watch.stop()
    threading.Thread(target=listen, name="kidym-stop", daemon=True).start()
    try:
        with watching(watch=watch):
            return run_job(system, job, route=route)
    finally:
        finished.set()
