"""Model files a careless user or an attacker might write, and what kidym does with them.

Two sources of inputs: mutations of the shipped example files (characters deleted,
inserted from a list of the language's pieces, swapped) and a grammar-aware
generator (random but well-formed statements: parameters with nested formulas and
extreme numbers, bodies with random transform chains, elements on every kind of
coordinate, instructions). Each input must end in a model (and then in equations) or
in located errors; anything else is a finding. :func:`check` classifies one input in
this process; :func:`main` runs many in worker processes with a time and memory
bound each and prints the figure (``python3 -m tests.lang.fuzzing --inputs 100000``;
``--write-docs`` puts it into ``docs/fuzz.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import platform
import random
import re
import resource
import signal
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Workers start as fresh interpreters: a forked one inherited the caller's address
#: space, which counts against its memory bound (``RLIMIT_AS``): called from a test
#: process that had already run hundreds of tests (a pytest-xdist worker) every input
#: could end in a MemoryError that was not its own.
_WORKERS = multiprocessing.get_context("spawn")
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.kdm"))

PIECES = [
    *"xyzmJPCDRSQ()|~,;:=+-*/^%?!<>#{}.'@$ \n\t0123456789eEλКуля°№\\\"",
    "Rx(", "Sx(", "Q(", "m(", ":=", "ПОКАЗАТЬ", "КОНЕЦ;", "ПСЕВДОСКОРОСТИ:=", "Jm.x",
    "x't", "x't't", "\\=", "<=", "omegax@B", "1e9", ".5", "sqrt(", "atan2(", "1/0", "9^9^9",
    "INITIAL:=", "TIME:=t(", "GRAVITY:=", "COORDINATES:=", "SHOW:=", "РАСЧЕТ:=",
    "РАЗМНОЖИТЬ:i(1,3);", "x$i", "m$(2*i)", "ИЗЪЯТЬ:=", "СРАВНИТЬ:=", "СОВМЕСТИТЬ:=V(",
    "x'y", "КОДИРОВКА:=", "ТВЕРДЫЕ ТЕЛА:", "B~A(", "J(", "РАЗМЕРНОСТИ:=", "l(см)", ", см;", "ωZB",
    "КИНЕМАТИКА", "РАБОТА:=", ": =", "$(", "*/", "%:", "??=", "\x1b[2J", "\u202e",
]
_FUNCS = ["sin", "cos", "sqrt", "exp", "log", "abs", "sign", "atan", "tanh", "floor"]
_NUMBERS = ["0", "1", "2.5", ".5", "1e-300", "1e300", "1e400", "0.9534570696121849",
            "3" * 60]
_HUGE = ["7" * 5000, "0." + "1" * 5000]


def _formula(rng: random.Random, names: list[str], depth: int = 0) -> str:
    r = rng.random()
    if depth > rng.choice([2, 4, 8, 40, 400]) or r < 0.25:
        if rng.random() < 0.01:
            return rng.choice(_HUGE)
        return rng.choice(names + _NUMBERS) if names else rng.choice(_NUMBERS)
    if r < 0.45:
        return f"{rng.choice(_FUNCS)}({_formula(rng, names, depth + 1)})"
    if r < 0.55:
        return f"-{_formula(rng, names, depth + 1)}"
    if r < 0.65:
        a, b = _formula(rng, names, depth + 1), _formula(rng, names, depth + 1)
        return f"({a} < {b} ? {a} ! {b})"
    op = rng.choice(["+", "-", "*", "/", "^", "%"])
    return f"({_formula(rng, names, depth + 1)} {op} {_formula(rng, names, depth + 1)})"


def generated(rng: random.Random) -> str:
    """A random, mostly well-formed model file."""
    params = [f"p{k}" for k in range(rng.randint(0, 4))]
    coords = [f"q{k}" for k in range(rng.randint(0, 3))]
    lines = [f"{p} = {rng.choice(_NUMBERS[:8])};" for p in params]
    defs: list[str] = []
    for k in range(rng.randint(0, 3)):
        name = f"d{k}"
        lines.append(f"{name} = {_formula(rng, params + coords + defs + ['t'])};")
        defs.append(name)
    bodies: list[str] = []
    for k in range(rng.randint(0, 3)):
        chain = []
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice(["R", "S"]) + rng.choice("xyz")
            arg = rng.choice([*coords, _formula(rng, [*params, *coords, "t"])]) \
                if (coords and rng.random() < 0.6) else _formula(rng, [*params, "t"])
            chain.append(f"{kind}({arg})")
        base = f"~{rng.choice(bodies)}" if bodies and rng.random() < 0.5 else ""
        inertia = ", ".join(rng.choice(["1", "0", "-1", "0.1", "p0" if params else "2"])
                            for _ in range(4))
        lines.append(f"B{k}{base} | {', '.join(chain)} | {inertia};")
        bodies.append(f"B{k}")
    targets = coords + [f"ωZ{b}" for b in bodies] + [f"{c}'t" for c in coords]
    for k in range(rng.randint(0, 3)):
        if targets:
            cls = rng.choice("JDCP")
            value = _formula(rng, params + coords + [f"{c}'t" for c in coords] + ["t"])
            lines.append(f"{cls}e{k}.{rng.choice(targets)} = {value};")
    if rng.random() < 0.5:
        lines.append(f"GRAVITY := {', '.join(_formula(rng, params) for _ in range(3))};")
    if coords and rng.random() < 0.5:
        lines.append("INITIAL := t(0), " + ", ".join(
            f"{c}({_formula(rng, params)})" for c in coords) + ";")
    if rng.random() < 0.3:
        lines.append(f"TIME := t(0, {_formula(rng, params)});")
    if rng.random() < 0.2:
        lines.append(f"PSEUDOVELOCITIES := v; {rng.choice(coords or ['x'])}'t = "
                     f"{_formula(rng, ['v', *coords])};")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def mutated(rng: random.Random, text: str) -> str:
    """``text`` with a few characters deleted, inserted (language pieces) or swapped."""
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        op, pos = rng.random(), rng.randrange(len(chars) + 1)
        if op < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(pos, rng.choice(PIECES))
        elif chars:
            i, j = rng.randrange(len(chars)), rng.randrange(len(chars))
            chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


# ------------------------------------------------------------------ hostile classes
# What the reliability audit of issue 27 found one token away from an example: deep
# nesting (the first-integral search of `kidym check`), huge templates and counts
# (`РАЗМНОЖИТЬ`), complex values (in parameters, constraints, a rolling sphere's centre).
_COMPLEX = ["sqrt(-1)", "(-8)^0.5", "(-1)^(1/3)", "log(-1)", "asin(2)", "acosh(0)",
            "sqrt(-p0)", "(x - 5)^1.5", "sqrt(x - 5)", "atanh(2)", "ln(-x^2 - 1)"]
_COUNTS = ["3", "300", "301", "100000", "100000000", "9" * 30, "-100000000"]
_INDICES = ["i", "(2*i)", "(i-1)", "(9^9^10)", "(i^i^i^i)", "(10^10)", "(i/0)", "(i/2)",
            "(-(-(-i)))", "(" + "+".join(["i"] * 200) + ")", "(2^64)", "(0^-1)"]


def _nested(rng: random.Random, inner: str) -> str:
    depth = rng.choice([20, 50, 100, 150, 300, 1000])
    funcs = rng.choice([["sin"], ["cos", "sin"], _FUNCS, ["exp"], ["sqrt"]])
    out = inner
    for k in range(depth):
        out = f"{funcs[k % len(funcs)]}({out})"
    return out


def hostile(rng: random.Random) -> str:
    """An input of the audit's hostile classes: an example with one value replaced by a
    deeply nested, complex or huge formula, or a template model with huge counts."""
    kind = rng.choice(["nested", "complex", "template", "count"])
    if kind == "template":
        index = rng.choice(_INDICES)
        return (f"РАЗМНОЖИТЬ : i(1, {rng.choice(_COUNTS)});\nm$i = 1;\n"
                f"B$i | Rz(x${index}) | Sx(1), m(m$i), Jz(1);\nGRAVITY := 0, -9.81, 0;\n")
    text = rng.choice(EXAMPLES).read_text(encoding="utf-8") if EXAMPLES else "x = 1;"
    if kind == "count":
        big = rng.choice([*_COUNTS, "1e308", "1e-308", "1e400"])
        return re.sub(r"t\(0, [^)]*\)", f"t(0, {big})", text, count=1) if \
            rng.random() < 0.5 else text + f"\nTIME := t(0, {big});\n"
    values = list(re.finditer(r"(?m)(?<=[=(,] )[-0-9.]+(?=[;,)])|(?<=\()[-0-9.]+(?=\))",
                              text))
    if not values:
        return text
    m = rng.choice(values)
    new = _nested(rng, m.group(0)) if kind == "nested" else rng.choice(_COMPLEX)
    if kind == "nested" and rng.random() < 0.5:   # a coordinate inside: work for derive
        new = _nested(rng, "x") if "x" not in text else new
    return text[:m.start()] + new + text[m.end():]


def is_hostile(seed: int) -> bool:
    """Every 40th input is of the hostile classes (checked through ``kidym check``,
    which costs about a second each)."""
    return seed % 40 == 39


def make_input(seed: int) -> str:
    """Input number ``seed``: a mutated example, a generated model or a hostile one,
    reproducibly."""
    rng = random.Random(seed)
    if is_hostile(seed):
        return hostile(rng)
    if rng.random() < 0.5 and EXAMPLES:
        return mutated(rng, rng.choice(EXAMPLES).read_text(encoding="utf-8"))
    return generated(rng)


def check(text: str, *, full: bool = False) -> str:
    """``"model"``, ``"located"`` (errors, each with a place or for the whole model) or
    ``"uncaught: <exception>"`` for one input, through parsing and derivation; with
    ``full`` also through the rest of ``kidym check`` (the consistent start of a
    constrained model and the first-integral search)."""
    import kidym
    from kidym.errors import DerivationError, ParseError

    try:
        model = kidym.parse(text)
    except ParseError as e:
        ok = bool(e.errors) and all(d.span is None or d.span.line >= 1 for d in e.diagnostics)
        return "located" if ok else "uncaught: ParseError without diagnostics"
    except Exception as e:  # the finding itself
        return f"uncaught: {type(e).__name__}: {str(e)[:80]}"
    if model.calculation not in (None, "DYNAMICS"):
        return "model"
    try:
        eq = kidym.derive(model)
    except (DerivationError, ParseError):
        return "located"
    except Exception as e:
        return f"uncaught: {type(e).__name__}: {str(e)[:80]}"
    return _check_rest(model, eq) if full else "model"


def _check_rest(model, eq) -> str:
    """What ``kidym check`` does after the derivation, as its ``main`` reports errors:
    a domain error with a message of its own is ``"located"``."""
    from numpy.linalg import LinAlgError

    from kidym.analysis.integrals import first_integrals
    from kidym.cli import _constrained_start
    from kidym.errors import DerivationError, SimulationError

    try:
        if eq.constraints is not None:
            _constrained_start(model, eq)
        if eq.n_w:
            try:
                # fewer random states and a shorter proof budget than `kidym check`:
                # the same code, at a cost that lets 100 000 inputs run
                first_integrals(model, samples=8, budget_s=1.0).lines()
            except (ValueError, DerivationError):
                pass  # printed by `kidym check` as "not searched (…)"
    except (ValueError, DerivationError, SimulationError, LinAlgError) as e:
        if len(str(e)) < 30:  # a bare message ("math domain error") is a finding
            return f"uncaught: {type(e).__name__}: {str(e)[:80]}"
        return "located"
    except Exception as e:
        return f"uncaught: {type(e).__name__}: {str(e)[:80]}"
    return "model"


class _Hang(BaseException):
    """The CPU-time bound of one input ran out (a BaseException: ``check`` catches
    every ``Exception`` of kidym as a finding, and this one is a different finding)."""


def _run(seeds: list[int], limit_s: float, memory_mb: int) -> list[tuple[int, str, float]]:
    """Check ``seeds`` in this (worker) process, each within the time and memory bound."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    def alarm(*_: object) -> None:
        raise _Hang

    # the bound is CPU time (ITIMER_PROF: user + system of this process), so that a
    # machine shared with other work finds the same hangs as an idle one
    signal.signal(signal.SIGPROF, alarm)
    out = []
    for seed in seeds:
        start = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, limit_s)
        try:
            outcome = check(make_input(seed), full=is_hostile(seed))
        except _Hang:
            outcome = f"hang over {limit_s:g} s"
        except MemoryError:
            outcome = f"memory over {memory_mb} MB"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        out.append((seed, outcome, time.process_time() - start,
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    return out


def _run_all(chunks: list[list[int]], limit_s: float, memory_mb: int,
             record=None) -> list[tuple]:
    """Every chunk in worker processes. A worker that dies (a signal) breaks the pool:
    the chunks it took down are run again one at a time, and the seeds of a chunk that
    still kills its worker one at a time, so that only the crashing inputs are
    crashes. ``record(rows)`` is called with the rows of each chunk as it ends."""
    results: list[tuple] = []
    broken: list[list[int]] = []
    record = record or (lambda rows: None)
    with ProcessPoolExecutor(mp_context=_WORKERS) as pool:
        futures = {pool.submit(_run, c, limit_s, memory_mb): c for c in chunks}
        for future in as_completed(futures):
            try:
                rows = future.result()
            except BrokenProcessPool:
                broken.append(futures[future])
                continue
            record(rows)
            results.extend(rows)
    return results + _alone(broken, limit_s, memory_mb, record)


def _alone(chunks: list[list[int]], limit_s: float, memory_mb: int,
           record=None) -> list[tuple]:
    """Each chunk in a worker of its own; a chunk that kills it, seed by seed (their
    rows passed to ``record`` as each ends). The chunks a crash took down with it run
    in a pool again, after the crashing one is isolated."""
    out: list[tuple] = []
    record = record or (lambda rows: None)
    for k, chunk in enumerate(chunks):
        try:
            with ProcessPoolExecutor(max_workers=1, mp_context=_WORKERS) as pool:
                rows = pool.submit(_run, chunk, limit_s, memory_mb).result()
        except BrokenProcessPool:
            rows = []
            for seed in chunk:
                try:
                    with ProcessPoolExecutor(max_workers=1, mp_context=_WORKERS) as pool:
                        rows += pool.submit(_run, [seed], limit_s, memory_mb).result()
                except BrokenProcessPool:
                    rows.append((seed, "crash of the process", 0.0, 0.0))
            record(rows)
            # the rest only went down with this one: back to a pool of all cores
            return out + rows + _run_all(chunks[k + 1:], limit_s, memory_mb, record)
        record(rows)
        out += rows
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="fuzz kidym's reading and derivation")
    ap.add_argument("--inputs", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--limit", type=float, default=10.0, help="CPU seconds per input")
    ap.add_argument("--memory", type=int, default=2048, help="MB per worker")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--log", default=None, metavar="FILE",
                    help="append each input's outcome to FILE (JSON lines) as it ends; "
                         "inputs already there (an interrupted run) are not run again")
    args = ap.parse_args(argv)
    seeds = list(range(args.start, args.start + args.inputs))
    done: dict[int, tuple] = {}
    if args.log and Path(args.log).exists():
        for line in Path(args.log).read_text(encoding="utf-8").splitlines():
            row = tuple(json.loads(line))
            if args.start <= row[0] < args.start + args.inputs:
                done[row[0]] = row
    todo = [s for s in seeds if s not in done]
    chunks = [todo[k:k + 25] for k in range(0, len(todo), 25)]

    def record(rows) -> None:
        if args.log:
            with open(args.log, "a", encoding="utf-8") as f:
                f.writelines(json.dumps(list(r)) + "\n" for r in rows)

    counts: Counter[str] = Counter()
    findings: list[tuple[int, str]] = []
    slowest = cpu = peak = 0.0
    for seed, outcome, seconds, mb in [*done.values(),
                                       *_run_all(chunks, args.limit, args.memory, record)]:
        kind = outcome.split(":")[0].split(" over")[0].split(" of")[0]
        counts[kind] += 1
        slowest, cpu, peak = max(slowest, seconds), cpu + seconds, max(peak, mb)
        if kind not in ("model", "located"):
            findings.append((seed, outcome))
    crashed = counts["crash"]
    lines = [f"inputs: {args.inputs} (seeds {args.start}…{args.start + args.inputs - 1}), "
             f"{cpu:.0f} s CPU in all",
             f"models: {counts['model']}, located errors: {counts['located']}, "
             f"uncaught exceptions: {counts['uncaught']}, hangs over {args.limit:g} s CPU: "
             f"{counts['hang']}, over {args.memory} MB: {counts['memory']}, "
             f"crashes: {crashed}",
             f"slowest input: {slowest:.2f} s CPU; peak memory of a worker: {peak:.0f} MB"]
    print("\n".join(lines))
    for seed, outcome in findings[:20]:
        print(f"  seed {seed}: {outcome}")
    if args.write_docs:
        write_docs(lines, args.inputs, time.strftime("%Y-%m-%d"), machine(),
                   logged=bool(args.log))
    return 1 if findings or crashed else 0


def machine() -> str:
    """The processor, its cores and Python, for the record of a run."""
    cpu = platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def write_docs(lines: list[str], inputs: int, date: str, where: str, *,
               logged: bool = False) -> None:
    """``docs/fuzz.md``: the figure of a run, with its command, date and machine. The
    docs test (``tests/test_docs_executed.py``) runs the command with 20 inputs and
    checks that it prints lines of the same shape."""
    doc = ROOT / "docs" / "fuzz.md"
    doc.write_text(
        "# Fuzzing: bad input gives located errors\n\n"
        f"Generated by `python3 -m tests.lang.fuzzing --inputs {inputs} "
        f"{'--log FILE ' if logged else ''}--write-docs` on {date} ({where}; see "
        "`tests/lang/fuzzing.py`; the time bound of an input is CPU time, so a machine "
        "shared with other work finds the same hangs; one input in 40 is of the hostile "
        "classes of issue 27 — deep nesting, huge templates and counts, complex values — "
        "and goes through the whole of `kidym check`); do not edit.\n\n"
        "<!-- doc-test: shorten --inputs 20 -->\n```text\n"
        f"$ python3 -m tests.lang.fuzzing --inputs {inputs}\n" + "\n".join(lines)
        + "\n```\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
