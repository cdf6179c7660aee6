"""Regenerate docs/benchmarks.md from the benchmarks: ``python benchmarks/report.py``.

Every registered benchmark (:data:`BENCHMARKS`, one line each) is a command whose
session block ``$ COMMAND`` is on the page: the script runs the command from the
repository root (``benchmarks/`` and ``examples/chain`` on ``PYTHONPATH``, as the
benchmarks expect), writes what it prints under the command — its machine line first,
each figure beside its peer measured in the same run — and the date of the run in the
line after the block. The prose between the blocks is kept. A benchmark whose block is
not on the page yet gets a section at the end: the first line of its module's
docstring as the heading, the rest as the text, then the block. The page is written
whole or not at all (:func:`kidym.simulation.result.write_atomically`), after every
command has run; a command that fails leaves the page as it was and is named.

Adding a benchmark is one line in :data:`BENCHMARKS`: its command as the page shows
it and the arguments of its quick run.

``--quick`` runs each command with its quick arguments appended (the last value of an
option wins) — a check that the scripts run and the page keeps its shape, not figures
to publish; ``--only NAME…`` runs those scripts only; ``--out FILE`` writes elsewhere
(``--check`` writes nothing and only says which registered blocks are missing).
"""

from __future__ import annotations

import argparse
import ast
import datetime
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"


@dataclass(frozen=True)
class Bench:
    """A benchmark of the page: ``command`` as its block shows it (after ``$ ``) and the
    arguments appended for ``--quick``."""

    command: str
    quick: str = ""

    @property
    def script(self) -> str:
        """The benchmark's file name (``work_precision.py``)."""
        return re.search(r"(\w+\.py)\b", self.command).group(1)


#: How the page runs a script from ``benchmarks/`` with the chain on the path.
_IN = "cd benchmarks && PYTHONPATH=..:../examples/chain python3 "

#: The benchmarks on the page, in its order; one line each.
BENCHMARKS: tuple[Bench, ...] = (
    Bench("python benchmarks/derive.py --ns 2 3 5 10 20 30", "--ns 2 3"),
    Bench("python benchmarks/linearize.py --ns 5 10 20 --budget 300", "--ns 2 --budget 120"),
    Bench("python benchmarks/linearize.py --symbolic --ns 4 6 8 --repeat 3 --budget 900",
          "--ns 2 --repeat 1 --budget 120"),
    Bench("python benchmarks/cas_core.py"),
    Bench(f"{_IN}native.py", "--chains --rounds 3"),
    Bench("python benchmarks/rhs.py            # a few minutes cold (compiles), about 1 cached",
          "--ns 2 --states 10"),
    Bench("python benchmarks/rhs_call.py       # about 15 s", "--ns 4 --states 10"),
    Bench(f"{_IN}simulate.py    # 13 s with its libraries cached",
          "--chains 3 --t-end 0.5 --accuracy-rtols 1e-6"),
    Bench(f"{_IN}constraints.py", "--rtols 1e-6"),
    Bench(f"{_IN}stiff.py", "--rtols 1e-6"),
    Bench(f"{_IN}constraints.py --minimal", "--rtols 1e-6"),
    Bench(f"{_IN}omni.py", "--rtols 1e-8 --t-end 10"),
    Bench("python benchmarks/opcount.py"),
    Bench("python benchmarks/table2.py         # about 30 s cold, 5 s cached"),
    Bench("python benchmarks/build.py --sizes 10 30 60 --single-up-to 30",
          "--sizes 10 --single-up-to 10"),
    Bench("python benchmarks/cli.py --repeat 3", "--repeat 1"),
    Bench("python benchmarks/watch.py --repeat 15", "--repeat 1"),
    Bench("python benchmarks/input_callbacks.py"),
    Bench("python benchmarks/work_precision.py --rtols 1e-6 1e-8 1e-9 1e-10",
          "--quick --rtols 1e-6 --repeat 1"),
)

#: The line after a block that says when the report ran it.
DATED = re.compile(r"^_Run of \d{4}-\d{2}-\d{2} by `python benchmarks/report.py`\._$")


def blocks(text: str) -> dict[str, tuple[int, int]]:
    """``command → (first, last)``: the line numbers of each session block's ``$``
    line and of its closing fence."""
    lines = text.split("\n")
    found, k = {}, 0
    while k < len(lines):
        if lines[k].startswith("```") and k + 1 < len(lines) and \
                lines[k + 1].startswith("$ "):
            end = next((j for j in range(k + 2, len(lines)) if lines[j].startswith("```")),
                       None)
            if end is None:
                break
            found.setdefault(lines[k + 1][2:], (k + 1, end))
            k = end
        k += 1
    return found


def run(bench: Bench, quick: bool) -> str:
    """What ``bench`` prints (stdout and stderr), its command run from the root."""
    command = bench.command.split("#", 1)[0].strip()
    if quick and bench.quick:
        command += " " + bench.quick
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "examples" / "chain"),
         *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"`{command}` failed (exit {done.returncode}):\n"
                           + done.stdout[-2000:])
    return done.stdout.rstrip("\n")


def section(bench: Bench) -> list[str]:
    """A new section for ``bench``: its module docstring, then its block."""
    tree = ast.parse((ROOT / "benchmarks" / bench.script).read_text(encoding="utf-8"))
    doc = (ast.get_docstring(tree) or bench.script).strip().split("\n")
    title = doc[0].rstrip(".")
    body = [line for line in doc[1:] if not line.startswith("Run: ")]
    marker = f"shorten {bench.quick}" if bench.quick else "slow timings"
    return ["", f"## {title} (`benchmarks/{bench.script}`)", *body, "",
            f"<!-- doc-test: {marker} -->", "```", f"$ {bench.command}", "```"]


def render(text: str, outputs: dict[str, str], date: str) -> str:
    """``text`` with each command's block holding its output and dated."""
    lines = text.split("\n")
    for bench in BENCHMARKS:
        if bench.command not in blocks("\n".join(lines)):
            lines += section(bench)
    for command, output in outputs.items():
        first, end = blocks("\n".join(lines))[command]
        dated = f"_Run of {date} by `python benchmarks/report.py`._"
        after = lines[end + 1:]
        if len(after) > 1 and after[0] == "" and DATED.match(after[1]):
            after = after[2:]
        lines = [*lines[:first + 1], *output.split("\n"), lines[end], "", dated, *after]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="each command with its quick arguments (a check, not figures)")
    ap.add_argument("--only", nargs="+", metavar="SCRIPT",
                    help="run these scripts only (e.g. work_precision.py)")
    ap.add_argument("--out", type=Path, default=PAGE, help="where to write the page")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; list the registered blocks missing from the page")
    args = ap.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    if args.check:
        missing = [b.command for b in BENCHMARKS if b.command not in blocks(text)]
        for command in missing:
            print(f"missing from docs/benchmarks.md: $ {command}")
        return 1 if missing else 0
    chosen = [b for b in BENCHMARKS if not args.only or b.script in args.only]
    outputs = {}
    for bench in chosen:
        print(f"running {bench.command}", file=sys.stderr, flush=True)
        try:
            outputs[bench.command] = run(bench, args.quick)
        except RuntimeError as exc:
            print(f"error: {exc}\nthe page was not written", file=sys.stderr)
            return 2
    sys.path.insert(0, str(ROOT))
    from kidym.simulation.result import write_atomically

    write_atomically(args.out, render(text, outputs, datetime.date.today().isoformat()))
    print(f"wrote {args.out} ({len(outputs)} benchmarks run)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
