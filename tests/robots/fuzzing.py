"""Mutated robot files (URDF, MJCF, SDF) and what ``kidym import`` does with them.

Each mutation of a robot file (a piece cut out, a number made bad or extreme, a name
changed, a line dropped or repeated, a joint type changed) must end in a model that
kidym reads — or refuses with located errors — or in a located ``ParseError`` (a
``ValueError`` with a message for a file kidym does not import): any other exception
is a finding. :func:`mutants` makes the inputs, :func:`check` classifies one;
``python -m tests.robots.fuzzing --per-file N`` runs N mutants of each seed file (the
inline robots of the tests and, where ``example-robot-data`` is installed, its real
robots) and prints the figure quoted in docs/robots.md.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

_TYPES = ["fixed", "planar", "floating", "ball", "revolute", "prismatic", "continuous",
          "hinge", "slide", "free", "gearbox", "universal", ""]
_BAD = ["x", "1e999", "", "1 2", "-", "0x1", "inf", "1,5", "NaN", "1e-320", "-0"]
_NAMES = ["", "l1", "base", "slider", "x y", "#{}", "t", "é", "shoulder", "world",
          "__model__", "pelvis"]


def mutants(text: str, n: int, seed: int):
    """``n`` mutations of ``text``, reproducible by ``seed``: numbers in attributes
    (URDF, MJCF) and in element text (SDF) alike."""
    rng = random.Random(seed)
    numbers = list(re.finditer(r'"(-?[0-9.]+(?:[eE]-?[0-9]+)?(?: -?[0-9.]+(?:[eE]-?[0-9]+)?)*)"'
                               r'|>\s*(-?[0-9.]+(?:[eE]-?[0-9]+)?(?:\s+-?[0-9.]+(?:[eE]-?[0-9]+)?)*)'
                               r'\s*<', text))
    names = list(re.finditer(r'(?:link|name|joint|body1|body2|relative_to|attached_to)='
                             r'["\']([^"\']+)["\']|<(?:parent|child)>([^<]+)<', text))
    for _ in range(n):
        kind = rng.randrange(6)
        if kind == 0 or (kind in (1, 5) and not numbers) or (kind == 2 and not names):
            a = rng.randrange(len(text))                # cut a piece out
            yield text[:a] + text[a + rng.randrange(1, 40):]
        elif kind == 1:                                 # a bad number
            m = rng.choice(numbers)
            g = 1 if m.group(1) is not None else 2
            yield text[:m.start(g)] + rng.choice(_BAD) + text[m.end(g):]
        elif kind == 2:                                 # a name changed
            m = rng.choice(names)
            g = 1 if m.group(1) is not None else 2
            yield text[:m.start(g)] + rng.choice(_NAMES) + text[m.end(g):]
        elif kind == 3:                                 # a line repeated or dropped
            lines = text.splitlines()
            i = rng.randrange(len(lines))
            lines[i:i + 1] = [] if rng.random() < 0.5 else [lines[i], lines[i]]
            yield "\n".join(lines)
        elif kind == 4:                                 # a joint type changed
            yield re.sub(r'type="(\w+)"', lambda m: f'type="{rng.choice(_TYPES)}"'
                         if rng.random() < 0.3 else m.group(0), text)
        else:                                           # extreme values
            m = rng.choice(numbers)
            g = 1 if m.group(1) is not None else 2
            vals = " ".join(str(rng.choice([0, 1, -1, 1e-300, 1e300, 0.5, -2]))
                            for _ in m.group(g).split())
            yield text[:m.start(g)] + vals + text[m.end(g):]


def check(path: Path) -> str:
    """``"model"``, ``"error"`` (located, or a clear ValueError) or ``"finding: …"``
    for the file at ``path``."""
    import kidym
    from kidym.errors import ParseError
    from kidym.robots import import_robot

    try:
        robot = import_robot(path)
    except ParseError as exc:
        return "error" if exc.diagnostics and "error:" in exc.render() else \
            "finding: a ParseError without a diagnostic"
    except ValueError as exc:
        return "error" if str(exc) else "finding: a ValueError without a message"
    except Exception as exc:   # the finding: a traceback
        return f"finding: {type(exc).__name__}: {exc} " + traceback.format_exc(limit=-3)
    try:
        kidym.parse(robot.text)
    except ParseError as exc:
        if "error:" not in exc.render():
            return "finding: the model's ParseError has no diagnostic"
    except Exception as exc:
        return f"finding: the model text: {type(exc).__name__}: {exc}"
    return "model"


def seed_files() -> list[tuple[str, str]]:
    """``(suffix, text)`` of the seed robots: the inline ones of the tests, and the real
    ones of ``example-robot-data`` where it is installed."""
    from tests.robots.test_sdf_import import ARM as SDF_ARM
    from tests.robots.test_urdf_import import ARM as URDF_ARM

    seeds = [(".urdf", URDF_ARM), (".sdf", SDF_ARM)]
    try:
        from tests.robots.test_mjcf_mujoco import ARM as MJCF_ARM
        from tests.robots.test_mjcf_mujoco import FOUR_BAR

        seeds += [(".xml", MJCF_ARM.replace(" DAMPING", "")), (".xml", FOUR_BAR)]
    except Exception:   # MuJoCo is not installed (the test module skips)
        pass
    try:
        from tests.oracles.pinocchio_robots import ROBOTS, robots_dir

        folder = robots_dir()
        seeds += [(".urdf", (folder / rel).read_text()) for rel in sorted(set(ROBOTS.values()))]
        seeds += [(".sdf", (folder / "cassie_description/robots" / f).read_text())
                  for f in ("cassie_v2.sdf", "cassie.sdf")]
    except Exception:   # example-robot-data is not installed
        pass
    return seeds


def main(argv: list[str] | None = None) -> int:
    """Run the mutants of every seed file and print what became of them."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-file", type=int, default=50, help="mutants of each seed file")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import logging
    import os

    logging.disable(logging.WARNING)      # yourdfpy's and MuJoCo's own chatter
    counts: Counter = Counter()
    findings: list[str] = []
    seeds = seed_files()
    sys.stdout.flush()
    sys.stderr.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)
    terminal = (os.dup(1), os.dup(2))
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)                      # MuJoCo writes its log to the working folder
        os.dup2(quiet, 1)                  # and its warnings to the terminal
        os.dup2(quiet, 2)
        try:
            outcomes = _run(seeds, tmp, args.per_file, args.seed)
        finally:
            os.dup2(terminal[0], 1)
            os.dup2(terminal[1], 2)
    for outcome in outcomes:
        counts[outcome if not outcome.startswith("finding") else "finding"] += 1
        if outcome.startswith("finding"):
            findings.append(outcome)
    total = sum(counts.values())

    print(f"{total} mutated robot files: {counts['model']} models, {counts['error']} "
          f"located errors, {counts['finding']} tracebacks")
    for f in findings[:20]:
        print(" ", f[:2000])
    return 1 if findings else 0


def _run(seeds, tmp: str, per_file: int, seed: int) -> list[str]:
    out = []
    for k, (suffix, text) in enumerate(seeds):
        path = Path(tmp) / f"mutant{suffix}"
        for mutant in mutants(text, per_file, seed=seed * 1000 + k):
            path.write_text(mutant)
            out.append(check(path))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
