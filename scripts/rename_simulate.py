"""Rename the subpackage ``kidym.simulate`` to ``kidym.simulation`` (issue 26), mechanically.

``kidym.simulate`` is the public function; the package that holds the engines was also
called ``kidym.simulate``, so importing one of its modules bound the package over the
function and ``kidym/__init__.py`` had to guard against it. This script:

1. ``git mv kidym/simulate kidym/simulation`` and ``git mv tests/simulate tests/simulation``
   (tests mirror the package);
2. rewrites every tracked text file: module paths ``kidym.simulate.X`` (``X`` a lower-case
   name not starting with ``_``), ``from kidym.simulate import …``, ``import
   kidym.simulate…``, ``:mod:`kidym.simulate```, file paths ``kidym/simulate`` and the
   tests' ``tests.simulate.``/``tests/simulate`` — and leaves the function's
   ``kidym.simulate(…)``, ``:func:`kidym.simulate``` and ``kidym.simulate.__module__``;
3. removes the guard class ``_Kidym`` from ``kidym/__init__.py``.

Run from the repository root, on a clean tree (it stages the moves; commit after)::

    python3 scripts/rename_simulate.py

It is idempotent: run it again after merging a branch that still uses the old paths.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".c", ".h", ".lark", ".kdm", ".json",
        ".yml", ".yaml", ""}

RULES = [
    (re.compile(r"\bkidym\.simulate\.(?=[a-z])"), "kidym.simulation."),
    (re.compile(r"\bfrom kidym\.simulate import\b"), "from kidym.simulation import"),
    (re.compile(r"\bimport kidym\.simulate\b(?!\()"), "import kidym.simulation"),
    (re.compile(r":mod:`kidym\.simulate`"), ":mod:`kidym.simulation`"),
    (re.compile(r"\bkidym/simulate\b"), "kidym/simulation"),
    (re.compile(r"\btests\.simulate\."), "tests.simulation."),
    (re.compile(r"\btests/simulate\b"), "tests/simulation"),
]

GUARD = re.compile(
    r"\n\nclass _Kidym\(types\.ModuleType\):\n.*?\nsys\.modules\[__name__\]\.__class__ = _Kidym\n",
    re.S)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def move(old: str, new: str) -> None:
    if (ROOT / old).exists() and not (ROOT / new).exists():
        git("mv", old, new)
    elif (ROOT / old).exists():   # a merge brought files back under the old name
        for path in git("ls-files", old).split():
            target = new + path[len(old):]
            (ROOT / target).parent.mkdir(parents=True, exist_ok=True)
            git("mv", path, target)


def rewrite(text: str) -> str:
    for pattern, new in RULES:
        text = pattern.sub(new, text)
    return text


def main() -> None:
    move("kidym/simulate", "kidym/simulation")
    move("tests/simulate", "tests/simulation")
    changed = 0
    for name in git("ls-files").splitlines():
        path = ROOT / name
        if path.suffix not in TEXT or not path.is_file() or name == "scripts/rename_simulate.py":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite(text)
        if name == "kidym/__init__.py":
            new = GUARD.sub("\n", new)
            if "types." not in new.replace("import types", ""):
                new = new.replace("import types\n", "")
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed += 1
    print(f"{changed} files rewritten")


if __name__ == "__main__":
    main()
