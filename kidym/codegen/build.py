"""Compile generated C into a shared library, cached by content.

The cache key is the SHA-256 of the generated source, the driver source, the
compiler command, its flags and its version. Libraries live in the user cache
directory — ``$KIDYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/kidym``, else
``~/.cache/kidym`` — as ``<model>-<key>.so`` beside the ``.c`` they came from. A
build happens in a private temporary directory inside the cache and is published
with an atomic rename, so a concurrent run sees either no library or a whole one;
two processes building the same model at once both succeed (the second rename
replaces an identical file). When the library exists it is loaded at once (the
seed's "check whether the DLL already exists").
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from kidym.codegen.emit import CCode
from kidym.errors import CompileError

#: Flags of every build (warnings are errors: the generated code must be clean).
BASE_FLAGS = ("-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-Werror", "-Wl,-Bsymbolic")
#: Libraries of the integration driver (Debian package ``libsundials-dev``).
LIBS = ("-lsundials_cvode", "-lsundials_arkode", "-lsundials_nvecserial",
        "-lsundials_sunmatrixdense", "-lsundials_sunlinsoldense",
        "-lsundials_sunnonlinsolfixedpoint", "-lm")

DRIVER = Path(__file__).with_name("driver.c")

_INSTALL_HINT = ("install a C compiler and SUNDIALS (`bash .ci/system-deps`, i.e. gcc and "
                 "libsundials-dev on Debian/Ubuntu), set CC to a working compiler, or use "
                 "engine='numpy'")


def cache_dir() -> Path:
    """Where compiled models are kept."""
    env = os.environ.get("KIDYM_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kidym"


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


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40] or "model"


def cache_key(code: CCode, flags: tuple[str, ...] = BASE_FLAGS) -> str:
    """Hash of everything that determines the library."""
    h = hashlib.sha256()
    for part in (code.source, DRIVER.read_text(encoding="utf-8"), " ".join(compiler()),
                 " ".join(flags), " ".join(LIBS), compiler_version()):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:24]


def library_path(code: CCode, flags: tuple[str, ...] = BASE_FLAGS) -> Path:
    """Where the library of ``code`` is (or will be) cached."""
    return cache_dir() / f"{_safe(code.model_name)}-{cache_key(code, flags)}.so"


def build(code: CCode, *, flags: tuple[str, ...] = BASE_FLAGS,
          extra_flags: tuple[str, ...] = ()) -> Path:
    """The compiled library of ``code``: from the cache, or built and published there.

    Parameters
    ----------
    code : CCode
        Generated source.
    flags : tuple of str
        Compiler flags (default :data:`BASE_FLAGS`).
    extra_flags : tuple of str
        Appended to ``flags`` (e.g. ``("-O3", "-march=native")``).

    Returns
    -------
    Path
        The shared library.

    Raises
    ------
    CompileError
        If the compiler is missing or fails; carries its command and output.
    """
    flags = tuple(flags) + tuple(extra_flags)
    target = library_path(code, flags)
    if target.exists():
        return target
    cmd0 = compiler()
    if shutil.which(cmd0[0]) is None:
        raise CompileError(f"C compiler `{cmd0[0]}` not found; {_INSTALL_HINT}",
                           command=cmd0)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    src = work / "model.c"
    src.write_text(code.source, encoding="utf-8")
    out = work / "lib.so"
    cmd = [*cmd0, *flags, str(src), str(DRIVER), "-o", str(out), *LIBS]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompileError(f"C compiler could not run ({exc}); {_INSTALL_HINT}",
                           command=cmd) from exc
    if proc.returncode != 0 or not out.exists():
        raise CompileError(
            f"C compiler failed (exit status {proc.returncode}) on the model "
            f"`{code.model_name}`; the source is kept in {work}; {_INSTALL_HINT}",
            command=cmd, output=(proc.stdout + proc.stderr).strip())
    os.replace(src, work / f"{target.stem}.c")
    os.replace(work / f"{target.stem}.c", target.with_suffix(".c"))
    os.replace(out, target)            # atomic publication
    shutil.rmtree(work, ignore_errors=True)
    return target
