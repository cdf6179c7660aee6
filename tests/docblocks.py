"""The code blocks of the documentation, how they are run, and how their output is compared.

Docs are executed: every fenced block of ``README.md``, ``docs/*.md`` and
``examples/*/README.md`` is one of

* a **session** — lines ``$ COMMAND`` each followed by the output it prints (standard
  output and standard error together, as on a terminal). The commands run in bash,
  in a scratch directory that holds a copy of ``examples/`` and every example model
  at its top level too (``double_pendulum.kdm``), with ``kidym``, ``python`` and
  ``python3`` this checkout's. ``$ cat FILE`` of a file that does not exist there
  writes the output shown into FILE (so a page can show a model and then run it).
  A command that shows no output must succeed; one that shows output must print it:
  a line ``…`` stands for any number of lines, runs of spaces compare equal, and
  numbers compare with a tolerance (:func:`same_line`). A figure that depends on how
  the processor rounds — a count of steps or evaluations, an error or a drift at the
  level of the tolerance or of roundoff — is written ``~6500`` ("about 6 500"): a
  count then matches within :data:`ABOUT_COUNT` (10 %), a value within a factor
  :data:`ABOUT_FACTOR` (3), an order of magnitude (``< ~1e-12``) by any up to one
  decade above it; a value given as ``≤1e-9`` ("at most") by any of that size or
  less. The page's text says that such figures depend on the machine;
* ``python`` — executed in that directory (a block with ``>>>`` lines is a doctest,
  its printed output compared with the same tolerance);
* ``kdm`` — a model, checked by ``tests/lang/test_docs_examples.py``;
* a **synopsis** — lines ``kidym SUBCOMMAND [--option …]``: every option and choice
  shown must exist in the command's parser.

Anything else needs a marker. A marker is an HTML comment (invisible when the page
is rendered) on the line just above the block's opening fence:

``<!-- doc-test: skip REASON -->``
    not run; the reason is required (a diagram, a block being reworked on a branch).
``<!-- doc-test: shorten ARGS -->``
    the commands are long: ARGS are appended to each (the last value of an option
    wins) and only the output's *shape* is compared — each printed line, with its
    numbers replaced by ``#``, must be a line of the block.
``<!-- doc-test: timings -->``
    the output is a measurement that cannot be reproduced exactly (benchmarks): the
    commands run as written and only the shape is compared. The page gives the date
    and the machine next to such a block.
``<!-- doc-test: slow -->``
    run as written, in a test marked ``slow``.

Markers combine (``<!-- doc-test: slow timings -->``).

``python3 -m tests.docblocks --update FILE…`` runs the sessions of the given pages
and writes what the commands print into them (blocks compared in full and without
``…``); the tests then check that the pages say what the commands print.
"""

from __future__ import annotations

import argparse
import doctest
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "examples").glob("*/README.md"))]
MARKERS = ("skip", "shorten", "timings", "slow")

_FENCE = re.compile(r"^( *)(`{3,})(\S*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
#: a number that is not part of a name (`phi1`, `S21Rod2`, `x86_64` are text; a ratio
#: `17x` is a number)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?=x\b|[^\w.]|$)")
#: ``~`` (about, :func:`_about`) or ``≤`` (at most) just before a number: a figure that
#: depends on the machine
_ABOUT = re.compile(r"[~≤](?=[-+]?(?:\d|\.\d))")
#: a bare power of ten: an order of magnitude
_DECADE = re.compile(r"^[-+]?1e[-+]?\d+$")
#: an "about" count matches within this fraction of it
ABOUT_COUNT = 0.10
#: an "about" value matches within this factor either way
ABOUT_FACTOR = 3.0
#: a number of seconds: a timing, never compared
_SECONDS = re.compile(r"\s*m?s\b")
#: the machine line every benchmark prints first (``benchmarks/_common.py``): it names
#: the machine of the measurement, so any machine line matches it
MACHINE_LINE = re.compile(r", \d+ cores; python \d")


@dataclass
class Block:
    """One fenced block of a page."""

    page: Path
    line: int                       # 1-based line of the opening fence
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)
    section: str = ""               # the ``##`` heading above the block

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def kind(self) -> str:
        lines = [ln for ln in self.text.splitlines() if ln.strip()]
        if "skip" in self.markers:
            return "skip"
        if any(ln.startswith("$ ") for ln in lines):
            return "session"
        if self.lang in ("python", "kdm"):
            return self.lang
        if lines and lines[0].startswith("kidym "):
            return "synopsis"
        return "unknown"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` with their markers."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    section = ""
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            if lines[i].startswith("## "):
                section = lines[i][3:].strip()
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3)
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        body = "\n".join(ln[indent:] for ln in lines[i + 1:j])
        out.append(Block(page, i + 1, lang, body + "\n", _markers(lines, i), section))
        i = j + 1
    return out


def _markers(lines: list[str], fence: int) -> dict[str, str]:
    """The ``doc-test`` markers on the lines just above line index ``fence``."""
    found: dict[str, str] = {}
    k = fence - 1
    while k >= 0 and (m := _MARKER.match(lines[k])):
        words = m.group(1).split(None, 1)
        head = words[0] if words else ""
        if head == "skip":
            found["skip"] = words[1] if len(words) > 1 else ""
        elif head == "shorten":
            found["shorten"] = words[1] if len(words) > 1 else ""
        else:
            for word in m.group(1).split():
                found[word] = ""
        k -= 1
    unknown = set(found) - set(MARKERS)
    if unknown:
        raise ValueError(f"line {fence + 1}: unknown doc-test marker {sorted(unknown)}; "
                         f"expected one of {MARKERS}")
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


# --- sessions -------------------------------------------------------------------------

def session(text: str) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` pairs of a session block."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    for _, expected in steps:
        while expected and not expected[-1].strip():
            expected.pop()
    return steps


def workspace(path: Path) -> Path:
    """A scratch directory to run a page's commands in (see the module docstring)."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "examples", path / "examples", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "out"))
    for model in (ROOT / "examples").glob("*/*.kdm"):
        shutil.copy(model, path / model.name)
    for name in ("kidym", "benchmarks", "tests", ".ci"):
        link = path / name
        if not link.exists():
            link.symlink_to(ROOT / name)
    bin_dir = path / ".bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "kidym").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kidym "$@"\n')
    (bin_dir / "kidym").chmod(0o755)
    for name in ("python", "python3"):
        if not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(sys.executable)
    return path


def environment(work: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PATH=f"{work / '.bin'}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "examples" / "chain")]),
               KIDYM_CACHE_DIR=str(cache), MPLBACKEND="Agg", PYTHONUNBUFFERED="1",
               PYTHONIOENCODING="utf-8", LC_ALL="C.UTF-8")
    env.pop("COLUMNS", None)
    return env


def run_command(command: str, work: Path, env: dict[str, str], *,
                timeout: float = 600) -> tuple[int, list[str]]:
    """Exit status and printed lines (stdout and stderr as one stream) of ``command``.

    A plain ``kidym …`` (or ``python3 -m kidym …``), possibly piped into ``head`` or
    ``sed -n`` or sent to ``/dev/null``, runs in this process through
    ``kidym.cli.main`` — the function the ``kidym`` command calls — which saves the
    start of a Python per command; anything else runs in bash."""
    parsed = _plain_kidym(command)
    if parsed is not None:
        return _run_in_process(*parsed, work=work, env=env)
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return proc.returncode, proc.stdout.decode("utf-8", "replace").splitlines()


_FILTERS = {
    "head": re.compile(r"^head -(?:n )?(\d+)$"),
    "line": re.compile(r"^sed -n (\d+)p$"),
    "from": re.compile(r"^sed -n '/(.+)/,\$p'$"),
}


def _plain_kidym(command: str) -> tuple[list[str], tuple[str, str] | None] | None:
    """``(arguments, stdout filter)`` of a command :func:`run_command` runs in-process."""
    head, _, _ = command.partition(" #")
    head, bar, pipe = head.partition(" | ")
    to_null = head.rstrip().endswith("> /dev/null")
    head = head.rstrip().removesuffix("> /dev/null")
    if any(c in head for c in "|&;<>$`*?"):
        return None
    try:
        words = shlex.split(head)
    except ValueError:
        return None
    if words[:3] == ["python3", "-m", "kidym"]:
        words = ["kidym", *words[3:]]
    if not words or words[0] != "kidym" or (bar and to_null):
        return None
    if to_null:
        return words[1:], ("null", "")
    if not bar:
        return words[1:], None
    for kind, pattern in _FILTERS.items():
        if m := pattern.match(pipe.strip()):
            return words[1:], (kind, m.group(1))
    return None


class _Tap(io.TextIOBase):
    """One of the two streams of an in-process run: writes land in a shared list."""

    def __init__(self, chunks: list[tuple[str, str]], tag: str) -> None:
        self._chunks, self._tag = chunks, tag

    def write(self, text: str) -> int:
        self._chunks.append((self._tag, text))
        return len(text)

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"


def _run_in_process(args: list[str], keep: tuple[str, str] | None, *, work: Path,
                    env: dict[str, str]) -> tuple[int, list[str]]:
    from kidym.cli import main as kidym_main

    chunks: list[tuple[str, str]] = []
    saved = {k: os.environ.get(k) for k in ("KIDYM_CACHE_DIR", "MPLBACKEND")}
    old_cwd, old_out, old_err = Path.cwd(), sys.stdout, sys.stderr
    os.environ.update({k: env[k] for k in saved})
    os.chdir(work)
    sys.stdout, sys.stderr = _Tap(chunks, "out"), _Tap(chunks, "err")
    try:
        status = kidym_main(args)
    except SystemExit as exc:          # argparse
        status = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.stdout, sys.stderr = old_out, old_err
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    lines: list[tuple[str, str]] = []
    partial = {"out": "", "err": ""}
    for tag, text in chunks:
        *done, partial[tag] = (partial[tag] + text).split("\n")
        lines.extend((tag, line) for line in done)
    lines.extend((tag, rest) for tag, rest in partial.items() if rest)
    out = [i for i, (tag, _) in enumerate(lines) if tag == "out"]
    if keep is not None:
        kind, arg = keep
        if kind == "null":
            out = []
        elif kind == "head":
            out = out[:int(arg)]
        elif kind == "line":
            out = out[int(arg) - 1:int(arg)]
        else:
            first = next((k for k, i in enumerate(out) if re.search(arg, lines[i][1])),
                         len(out))
            out = out[first:]
    kept = set(out)
    printed = [line for i, (tag, line) in enumerate(lines) if tag == "err" or i in kept]
    return int(status or 0), printed


def cat_target(command: str, work: Path) -> Path | None:
    """The file of a ``cat FILE`` command whose file does not exist yet (it is written)."""
    words = shlex.split(command)
    if len(words) == 2 and words[0] == "cat" and not (work / words[1]).exists():
        return work / words[1]
    return None


def lengthen(command: str, args: str) -> str:
    """``command`` with ``args`` appended before its first pipe or redirection."""
    head, sep, comment = command.partition("#")
    cut = min((i for i in (head.find("|"), head.find(">")) if i >= 0), default=len(head))
    return f"{head[:cut].rstrip()} {args} {head[cut:].strip()}".rstrip() + (
        f"  #{comment}" if sep else "")


# --- comparison -----------------------------------------------------------------------

def _close(expected: str, actual: str) -> bool:
    """Numbers as a page quotes them: counts exact, values to 2 % (roundoff-level
    values, below 1e-6, to a factor 3: they move with the libraries)."""
    e, a = float(expected), float(actual)
    if not any(c in expected for c in ".eE") and not any(c in actual for c in ".eE"):
        return e == a
    if abs(e) < 1e-6 and abs(a) < 1e-6:
        return (e == 0) == (a == 0) and (e == 0 or (e * a > 0 and 1 / 3 <= a / e <= 3))
    return abs(a - e) <= 0.02 * max(abs(e), abs(a))


def _about(expected: str, actual: str) -> bool:
    """A figure the page gives as ``~expected``: a count within :data:`ABOUT_COUNT`,
    a value within a factor :data:`ABOUT_FACTOR`, of the same sign; an order of magnitude
    (``1e-12``, as a script prints a bound ``< 1e-12``) by anything up to one decade
    above it."""
    e, a = float(expected), float(actual)
    if not any(c in expected for c in ".eE") and not any(c in actual for c in ".eE"):
        return abs(a - e) <= ABOUT_COUNT * abs(e)
    if e == 0:
        return a == 0
    if _DECADE.match(expected):    # a bound "< 1e-12": any below it, or a decade above
        return abs(a) <= 10 * (1 + 1e-9) * abs(e)
    return e * a > 0 and 1 / ABOUT_FACTOR <= a / e <= ABOUT_FACTOR


def _split(line: str) -> tuple[list[str], list[tuple[str, bool, str]]]:
    """Text between numbers (spaces collapsed) and the numbers (with 'is a timing' and
    the mark before it: ``~`` about, ``≤`` at most, or ``""``)."""
    texts, numbers, pos = [], [], 0
    for m in NUMBER.finditer(line):
        mark = line[m.start() - 1] if m.start() > 0 and line[m.start() - 1] in "~≤" else ""
        texts.append(" ".join(line[pos:m.start() - len(mark)].split()))
        numbers.append((m.group(), bool(_SECONDS.match(line, m.end())), mark))
        pos = m.end()
    texts.append(" ".join(line[pos:].split()))
    return texts, numbers


def same_line(expected: str, actual: str) -> bool:
    """Text equal (runs of spaces aside), numbers close, timings (``0.24 s``) anything,
    figures given as about (``~6500``) by :func:`_about`, as at most (``≤1e-9``) by their
    size."""
    te, ne = _split(expected)
    ta, na = _split(actual)
    if te != ta or len(ne) != len(na):
        return False
    return all(timing or (_about(e, a) if mark == "~" else
                          abs(float(a)) <= abs(float(e)) if mark == "≤" else _close(e, a))
               for (e, timing, mark), (a, _, _) in zip(ne, na))


def _same_or_machines(expected: str, actual: str) -> bool:
    both_machines = bool(MACHINE_LINE.search(expected) and MACHINE_LINE.search(actual))
    return both_machines or same_line(expected, actual)


#: Integration methods: which one a benchmark finds fastest is a measurement too
METHOD = re.compile(r"\b(?:ERK8|Fehlberg78|ERK5|Adams|BDF|DOP853|RK45|Radau|LSODA)\b")


def skeleton(line: str) -> str:
    """A line with its numbers, and the ``-`` of a value not measured, as ``#``, and the
    name of an integration method as ``<method>``."""
    line = _ABOUT.sub("", METHOD.sub("<method>", line))
    return " ".join(re.sub(r"(?<!\S)-(?=x?(?:\s|$))", "#", NUMBER.sub("#", line)).split())


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` lines against ``expected`` ones, where a line ``…`` matches any run."""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(expected):
                memo[i, j] = j == len(actual)
            elif expected[i].strip() == "…":
                memo[i, j] = go(i + 1, j) or (j < len(actual) and go(i, j + 1))
            else:
                memo[i, j] = (j < len(actual) and _same_or_machines(expected[i], actual[j])
                              and go(i + 1, j + 1))
        return memo[i, j]

    return go(0, 0)


def same_shape(expected: list[str], actual: list[str]) -> bool:
    """Every printed line, numbers aside, is a line of the block (and something printed).
    The machine line and the notes of a benchmark (``note: pydy … not installed``) are
    not compared: they say what this machine has."""
    shapes = {skeleton(line) for line in expected}
    shown = [line for line in actual if line.strip() and not line.startswith("note: ")
             and not MACHINE_LINE.search(line)]
    return bool(shown) and all(skeleton(line) in shapes for line in shown)


def difference(expected: list[str], actual: list[str]) -> str:
    import difflib

    return "\n".join(difflib.unified_diff(expected, actual, "page", "printed", lineterm=""))


def check_session(block: Block, work: Path, env: dict[str, str]) -> None:
    """Run the commands of a session block and compare what they print."""
    shape_only = "shorten" in block.markers or "timings" in block.markers
    for command, expected in session(block.text):
        target = cat_target(command, work)
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(expected) + "\n", encoding="utf-8")
            continue
        if "shorten" in block.markers:
            command = lengthen(command, block.markers["shorten"])
        status, printed = run_command(command, work, env)
        where = f"{block.name}: `{command}`"
        wants_error = any(": error:" in line or line.startswith("kidym: error")
                          for line in expected)
        assert wants_error or status == 0, (
            f"{where} exited with {status}:\n" + "\n".join(printed[-30:]))
        if not expected:
            continue
        if shape_only:
            shapes = {skeleton(x) for x in expected}
            assert same_shape(expected, printed), (
                f"{where} printed lines of another shape (numbers as #):\n"
                + "\n".join(skeleton(x) for x in printed if skeleton(x) not in shapes))
        else:
            assert matches(expected, printed), (
                f"{where} printed something else:\n{difference(expected, printed)}")


# --- python ---------------------------------------------------------------------------

class _Checker(doctest.OutputChecker):
    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return (super().check_output(want, got, optionflags)
                or matches(want.splitlines(), got.splitlines()))


def run_python(block: Block, work: Path) -> None:
    """Execute a python block in ``work`` (a doctest if it has ``>>>`` lines)."""
    old = Path.cwd()
    os.chdir(work)
    try:
        if ">>> " in block.text:
            test = doctest.DocTestParser().get_doctest(block.text, {}, block.name,
                                                       str(block.page), block.line)
            runner = doctest.DocTestRunner(checker=_Checker(),
                                           optionflags=doctest.ELLIPSIS)
            runner.run(test)
            assert runner.failures == 0, f"{block.name}: {runner.failures} doctest failures"
        else:
            code = compile("\n" * block.line + block.text, str(block.page), "exec")
            exec(code, {"__name__": "__doc_block__"})
    finally:
        os.chdir(old)


# --- synopsis -------------------------------------------------------------------------

def synopsis_commands(text: str) -> list[tuple[str, str]]:
    """``(subcommand, its synopsis text)`` of a synopsis block (continuations joined)."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.startswith("kidym "):
            out.append((line.split()[1], line))
        elif out and line.strip():
            out[-1] = (out[-1][0], out[-1][1] + " " + line)
    return out


def check_synopsis(block: Block) -> list[str]:
    """Problems: options or choices a synopsis shows that the command does not have."""
    from kidym.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.choices and "run" in a.choices)
    problems = []
    for name, text in synopsis_commands(block.text):
        if name not in sub.choices:
            problems.append(f"`kidym {name}` is not a command")
            continue
        options = {o: a for a in sub.choices[name]._actions for o in a.option_strings}
        for m in re.finditer(r"(--?[a-z][\w-]*)(?:[ =]([a-z0-9]+(?:\|[a-z0-9]+)+))?", text):
            opt, choices = m.group(1), m.group(2)
            if opt not in options:
                problems.append(f"`kidym {name}` has no option {opt}")
            elif choices and options[opt].choices:
                extra = set(choices.split("|")) - set(options[opt].choices)
                if extra:
                    problems.append(f"`kidym {name} {opt}` has no choice {sorted(extra)}")
    return problems


# --- update ---------------------------------------------------------------------------

def update(page: Path, work: Path, env: dict[str, str]) -> list[str]:
    """Write what the sessions of ``page`` print into it; the blocks not updated."""
    lines = page.read_text(encoding="utf-8").splitlines()
    left: list[str] = []
    replaced: list[tuple[Block, list[str]]] = []
    for block in blocks(page):                 # in order: a command may need an earlier one
        if block.kind != "session" or set(block.markers) & {"shorten", "timings"}:
            continue
        steps = session(block.text)
        if any(line.strip() == "…" for _, expected in steps for line in expected):
            try:
                check_session(block, work, env)   # run it: later blocks may need its files
            except AssertionError:
                left.append(f"{block.name} (has …: edit it by hand)")
            continue
        new: list[str] = []
        for command, expected in steps:
            new.append(f"$ {command}")
            target = cat_target(command, work)
            if target is not None:
                target.write_text("\n".join(expected) + "\n", encoding="utf-8")
                new.extend(expected)
                continue
            _, printed = run_command(command, work, env)
            if expected:   # a page that still matches keeps its text (timings, spacing)
                new.extend(expected if matches(expected, printed) else printed)
        replaced.append((block, new))
    for block, new in reversed(replaced):      # bottom up: line numbers stay valid
        fence = lines[block.line - 1]
        indent = " " * (len(fence) - len(fence.lstrip()))
        end = block.line + len(block.text.splitlines())
        lines[block.line:end] = [indent + x if x else x for x in new]
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return left


def main(argv: list[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(description="write what the pages' commands print into them")
    ap.add_argument("--update", nargs="+", type=Path, required=True, metavar="PAGE")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        for page in args.update:
            work = workspace(Path(tmp) / page.stem)
            for name in update(page.resolve(), work, environment(work, cache)):
                print(f"not updated: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
