"""Compile generated C into a shared library, cached by content.

The default build is portable and reproducible: ``-O2 -ffp-contract=off`` for the
processor family's baseline instruction set, so a model gives the same numbers, to
the last digit the C library allows, on every x86-64 (or every AArch64) machine.
Tuning for the processor that builds (``-march=native -ffp-contract=fast``: its
instruction set and fused multiply-adds) is an opt-in — ``build(code, native=True)``
or ``KIDYM_NATIVE=1`` — and ``$KIDYM_CFLAGS`` appends flags of the user's own
(``docs/compiled.md``, "Build and cache").

The cache key is the SHA-256 of the generated source, the driver source, the
compiler command, its flags and its version, and the machine's architecture —
and, when a flag tunes the code for a processor (``-march=…``, ``-mcpu=…``,
``-mavx2`` …), that processor's model and feature flags, so that a cache directory
shared by several machines never serves a library built for another CPU. Libraries live in
the user cache directory — ``$KIDYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/kidym``, else
``~/.cache/kidym``, private to the user (:func:`kidym.cache.private_cache_dir`) — as
``<model>-<key>.so`` beside the ``.c`` they came from and the ``.sha256`` of the
library. That digest is an HMAC of the key (what kidym generated) and the library's
bytes under a secret of the user's cache (``secret``, mode 0600), so a file beside
the library is no authority: a library whose digest does not match (truncated,
overwritten, foreign, another model's) is never loaded but rebuilt. A
build happens in a private temporary directory inside the cache and is published
with an atomic rename, so a concurrent run sees either no library or a whole one;
two processes building the same model at once both succeed (the second rename
replaces an identical file). When the library exists it is loaded at once (the
seed's "check whether the DLL already exists").
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import hashlib
import hmac
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from kidym.cache import cache_dir, cache_secret, private_cache_dir
from kidym.codegen.emit import CCode
from kidym.errors import CompileError

#: Flags of every build (warnings are errors: the generated code must be clean). No
#: ``-march``, and no contraction of ``a*b + c`` into fused multiply-adds: the same
#: instructions, and the same roundings, on every processor of the architecture.
BASE_FLAGS = ("-std=c99", "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-Wall", "-Werror",
              "-Wl,-Bsymbolic")
#: Libraries of the integration driver (Debian package ``libsundials-dev``).
LIBS = ("-lsundials_cvode", "-lsundials_arkode", "-lsundials_nvecserial",
        "-lsundials_sunmatrixdense", "-lsundials_sunlinsoldense",
        "-lsundials_sunnonlinsolfixedpoint", "-lm")

#: Tuning for the processor that builds (and runs) the library, the opt-in of
#: :func:`build` (``native=True`` or ``KIDYM_NATIVE=1``, when the compiler accepts it):
#: its instruction set, and fused multiply-adds where it has them. Faster by the
#: figure ``benchmarks/native.py`` measures (``docs/compiled.md``), but the step
#: counts and last digits of a run then depend on the processor.
NATIVE_FLAGS = ("-march=native", "-ffp-contract=fast")
#: The environment variable whose flags (split like a shell word list) every build
#: appends, e.g. ``KIDYM_CFLAGS="-O3 -march=native -ffp-contract=fast"``.
CFLAGS_ENV = "KIDYM_CFLAGS"

DRIVER = Path(__file__).with_name("driver.c")
#: Seconds one compiler run may take.
COMPILE_TIMEOUT = 600

_INSTALL_HINT = ("install a C compiler and SUNDIALS (`bash .ci/system-deps`, i.e. gcc and "
                 "libsundials-dev on Debian/Ubuntu), set CC to a working compiler, or use "
                 "engine='numpy'")


def compiler() -> list[str]:
    """The C compiler command: ``$CC`` (split like a shell word list) or ``cc``."""
    return shlex.split(os.environ.get("CC", "cc")) or ["cc"]


@functools.lru_cache(maxsize=8)
def _version(cmd: tuple[str, ...]) -> str:
    try:
        out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 and (
        out.stdout or out.stderr) else "unknown"


def compiler_version() -> str:
    """First line of ``$CC --version`` (``unknown`` if it does not answer)."""
    return _version(tuple(compiler()))


@functools.lru_cache(maxsize=8)
def _accepts(cmd: tuple[str, ...], flags: tuple[str, ...]) -> bool:
    """Whether the compiler compiles a trivial file with ``flags``."""
    try:
        proc = subprocess.run([*cmd, *flags, "-x", "c", "-c", "-o", os.devnull, "-"],
                              input="int kidym_probe;\n", capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def native_wanted(native: bool | None = None) -> bool:
    """Whether to tune for this processor: ``native``, or when it is ``None`` the
    environment (``KIDYM_NATIVE=1``; the default build is portable)."""
    if native is None:
        return os.environ.get("KIDYM_NATIVE", "0").strip() == "1"
    return bool(native)


def native_flags(native: bool | None = None) -> tuple[str, ...]:
    """:data:`NATIVE_FLAGS` if wanted (:func:`native_wanted`) and accepted, else ``()``."""
    if not native_wanted(native):
        return ()
    cmd = tuple(compiler())
    if shutil.which(cmd[0]) is None:
        return ()
    return NATIVE_FLAGS if _accepts(cmd, NATIVE_FLAGS) else ()


def env_flags() -> tuple[str, ...]:
    """The flags of ``$KIDYM_CFLAGS`` (:data:`CFLAGS_ENV`), split like shell words."""
    try:
        return tuple(shlex.split(os.environ.get(CFLAGS_ENV, "")))
    except ValueError as exc:
        raise CompileError(f"${CFLAGS_ENV} is not a list of compiler flags ({exc}): "
                           f"{os.environ.get(CFLAGS_ENV)!r}; quote it as in a shell, "
                           f"e.g. KIDYM_CFLAGS='-O3 -march=native'") from exc


def build_flags(flags: tuple[str, ...] = BASE_FLAGS, extra_flags: tuple[str, ...] = (),
                native: bool | None = None) -> tuple[str, ...]:
    """The flags :func:`build` compiles with: ``flags``, the native tuning (when
    :func:`native_wanted`), ``extra_flags``, then ``$KIDYM_CFLAGS`` (the compiler takes
    the last of contradicting flags: ``-O3`` after ``-O2`` wins)."""
    return tuple(flags) + native_flags(native) + tuple(extra_flags) + env_flags()


def tunes_for_processor(flags: tuple[str, ...]) -> bool:
    """Whether ``flags`` make code for one processor (``-march=``, ``-mcpu=``,
    ``-mtune=``, ``-mavx2``, ``-mfma`` … : any machine option ``-m…``)."""
    return any(f.startswith("-m") for f in flags)


@functools.cache
def cpu_fingerprint() -> str:
    """The processor's model and feature flags (``/proc/cpuinfo``; else ``platform``)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    wanted = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "flags", "Features", "CPU part") and key not in wanted:
            wanted[key] = value.strip()
    return "|".join([platform.machine(), platform.processor(),
                     *(f"{k}={v}" for k, v in sorted(wanted.items()))])


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40] or "model"


def _run(cmd: list[str], work: Path) -> subprocess.CompletedProcess:
    """Run a compiler command in ``work``, in a process group of its own.

    Past :data:`COMPILE_TIMEOUT` (:class:`subprocess.TimeoutExpired`), or when the
    caller is interrupted, the whole group is killed: killing ``cc`` alone left its
    ``cc1`` running, gigabytes and all.
    """
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=work, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=COMPILE_TIMEOUT)
        except BaseException:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _compile(cmd0: list[str], flags: tuple[str, ...], sources: list[Path], out: Path,
             work: Path, progress: Callable[[int, int], None] | None = None,
             ) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Compile ``sources`` and the driver into the library ``out``; the (failed) run.

    One translation unit: one compiler run. Several (a big model's parts): each is
    compiled to an object file on its own, as many at once as there are processors,
    then they are linked. ``progress(done, total)`` is called as units finish.
    """
    if len(sources) == 1:
        cmd = [*cmd0, *flags, str(sources[0]), str(DRIVER), "-o", str(out), *LIBS]
        if progress:
            progress(0, 1)
        run = _run(cmd, work)
        if progress:
            progress(1, 1)
        return run, cmd
    compile_flags = [f for f in flags if f != "-shared" and not f.startswith("-Wl,")]
    units = [*sources, DRIVER]
    objects = [work / f"unit{k}.o" for k in range(len(units))]
    commands = [[*cmd0, *compile_flags, "-c", str(u), "-o", str(o)]
                for u, o in zip(units, objects)]
    total = len(commands) + 1                    # the link is the last step
    if progress:
        progress(0, total)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = [pool.submit(_run, c, work) for c in commands]
        for done, _ in enumerate(concurrent.futures.as_completed(futures), 1):
            if progress:
                progress(done, total)
        runs = [f.result() for f in futures]
    for run, cmd in zip(runs, commands):
        if run.returncode != 0:
            return run, cmd
    cmd = [*cmd0, *flags, *map(str, objects), "-o", str(out), *LIBS]
    run = _run(cmd, work)
    if progress:
        progress(total, total)
    return run, cmd


def _digest_path(library: Path) -> Path:
    """The digest of a cached library (:func:`_digest`), written beside it when it is
    published."""
    return library.with_suffix(".sha256")


def _secret(folder: Path) -> bytes:
    """The cache's secret (:func:`kidym.cache.cache_secret`)."""
    return cache_secret(folder)


def _digest(library: Path, bytes_from: Path | None = None) -> str:
    """HMAC-SHA-256, under the secret of the cache holding ``library``, of its name (its
    key: a hash of what kidym generated and the compiler) and its bytes (read from
    ``bytes_from`` when it is not published yet)."""
    h = hmac.new(_secret(library.parent), library.name.encode("utf-8") + b"\0", "sha256")
    with (bytes_from or library).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _intact(library: Path) -> bool:
    """Whether ``library`` is byte for byte the one a build of this user published for
    its key (a foreign ``.sha256`` beside it does not make it so)."""
    try:
        return hmac.compare_digest(
            _digest_path(library).read_text(encoding="ascii").strip(), _digest(library))
    except (OSError, UnicodeDecodeError):
        return False


def cached_library(library: Path) -> Path | None:
    """``library`` if it is in the (private) cache and whole (:func:`_intact`), else
    ``None``."""
    private_cache_dir()
    return library if library.exists() and _intact(library) else None


def _toolchain_broken(cmd: list[str], flags: tuple[str, ...], output: str) -> bool:
    """Whether a failed build is the set-up's fault: SUNDIALS missing, or a compiler
    that cannot compile even a trivial file with the same flags."""
    if re.search(r"sundials|cannot find -l|\.h: No such file", output):
        return True
    return not _accepts(tuple(cmd), tuple(flags))


def _keep_failed(work: Path, target: Path) -> Path:
    """Move the source of a failed build to ``<cache>/failed/`` and remove ``work``."""
    failed = target.parent / "failed"
    failed.mkdir(exist_ok=True)
    kept = failed / f"{target.stem}.c"
    try:
        os.replace(work / "model.c", kept)
    except OSError:
        kept = work / "model.c"
    else:
        shutil.rmtree(work, ignore_errors=True)
    return kept


def cache_key(code: CCode, flags: tuple[str, ...] = BASE_FLAGS) -> str:
    """Hash of everything that determines the library: the sources, the compiler, its
    flags, the machine's architecture and — for flags that tune for one processor
    (:func:`tunes_for_processor`) — that processor (:func:`cpu_fingerprint`)."""
    h = hashlib.sha256()
    for part in (*code.sources, DRIVER.read_text(encoding="utf-8"), " ".join(compiler()),
                 " ".join(flags), " ".join(LIBS), compiler_version(), platform.machine(),
                 cpu_fingerprint() if tunes_for_processor(flags) else ""):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:24]


def library_path(code: CCode, flags: tuple[str, ...] = BASE_FLAGS) -> Path:
    """Where the library of ``code`` is (or will be) cached."""
    return cache_dir() / f"{_safe(code.model_name)}-{cache_key(code, flags)}.so"


def build(code: CCode, *, flags: tuple[str, ...] = BASE_FLAGS,
          extra_flags: tuple[str, ...] = (), native: bool | None = None,
          progress: Callable[[int, int], None] | None = None) -> Path:
    """The compiled library of ``code``: from the cache, or built and published there.

    Parameters
    ----------
    code : CCode
        Generated source.
    flags : tuple of str
        Compiler flags (default :data:`BASE_FLAGS`).
    extra_flags : tuple of str
        Appended to ``flags`` (e.g. ``("-O3",)``).
    native : bool, optional
        Tune for this processor (:data:`NATIVE_FLAGS`, when the compiler accepts it):
        faster, but step counts and last digits then depend on the processor. ``None``
        (the default) asks the environment: ``KIDYM_NATIVE=1`` turns it on; else the
        build is portable (:data:`BASE_FLAGS`). ``$KIDYM_CFLAGS`` is appended in any
        case (:func:`build_flags`).
    progress : callable, optional
        ``progress(done, total)``, called as the compiler runs finish (a big model's
        parts are several; the link is the last); not called for a cached library.

    Returns
    -------
    Path
        The shared library.

    Raises
    ------
    CompileError
        If the compiler is missing or fails; carries its command and output.
    """
    flags = build_flags(flags, extra_flags, native)
    private_cache_dir()   # the user's own, or CacheError saying what to do
    target = library_path(code, flags)
    if target.exists() and _intact(target):
        return target
    # missing, or truncated, overwritten or foreign: never loaded (a bad library can
    # crash the process on load), rebuilt and published over it by the atomic rename
    # below — not deleted first, which could delete a whole copy that a concurrent run
    # has just published
    cmd0 = compiler()
    if shutil.which(cmd0[0]) is None:
        raise CompileError(f"C compiler `{cmd0[0]}` not found; {_INSTALL_HINT}",
                           command=cmd0)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    sources = [work / "model.c", *(work / f"part{k}.c" for k in range(len(code.parts)))]
    try:
        for path, text in zip(sources, code.sources):
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _unwritable(work, target, exc) from exc
    out = work / "lib.so"
    try:
        # in the private directory: nothing of the caller's working directory is seen
        proc, cmd = _compile(cmd0, flags, sources, out, work, progress)
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise CompileError(f"C compiler could not run ({exc}); {_INSTALL_HINT}",
                           command=cmd0) from exc
    if proc.returncode != 0 or not out.exists():
        output = (proc.stdout + proc.stderr).strip()
        if "No space left on device" in output:
            raise _unwritable(work, target, OSError(28, "No space left on device"))
        kept = _keep_failed(work, target)
        if _toolchain_broken(cmd0, flags, output):
            raise CompileError(
                f"the C tool-chain cannot build the model `{code.model_name}` (exit status "
                f"{proc.returncode}; the source is kept as {kept}); {_INSTALL_HINT}",
                command=cmd, output=output)
        raise CompileError(
            f"internal error: kidym generated C for the model `{code.model_name}` that a "
            f"working compiler rejects (exit status {proc.returncode}). This is a bug in "
            f"kidym, not in your set-up: please report it to the kidym developers with "
            f"the model file and {kept}. Meanwhile engine='numpy' runs the model.",
            command=cmd, output=output, kind="internal")
    try:
        for k, path in enumerate(sources):
            os.replace(path, target.with_suffix(".c" if k == 0 else f".part{k - 1}.c"))
        digest = work / "lib.sha256"
        digest.write_text(_digest(target, bytes_from=out) + "\n", encoding="ascii")
        os.replace(digest, _digest_path(target))
        os.replace(out, target)            # atomic publication
    except OSError as exc:
        raise _unwritable(work, target, exc) from exc
    shutil.rmtree(work, ignore_errors=True)
    return target


def _unwritable(work: Path, target: Path, exc: OSError) -> OSError:
    """The error of a build that could not write into the cache (a full disk): the
    build folder removed, the message naming the cache and what to do."""
    shutil.rmtree(work, ignore_errors=True)
    return OSError(exc.errno, f"cannot write the compiled model into the kidym cache "
                              f"{target.parent} ({exc.strerror or exc}): free space there, or "
                              "set KIDYM_CACHE_DIR to a folder with room")
