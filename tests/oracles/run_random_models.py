"""Long differential run over random models (not collected by pytest).

Checks random models against SymPy's ``KanesMethod`` (the expanded SymPy ``M``, ``F`` of
kidym's ``Equations`` too, for every ``--sympy-view-every``-th model) and, for every
``--compiled-every``-th model, the NumPy engine against the compiled one; for every
``--energy-every``-th conservative model, short runs of both engines against each other
and the oracle's energy along them. Stops after ``--models`` models or ``--minutes``
minutes, whichever comes first, spread over ``--jobs`` processes (each with its own range
of Hypothesis seeds). Prints the number of models tried, the model classes covered and
every disagreement (with the model text). Exit status 1 if any disagreement was found.
``--write-docs`` puts the summary into ``docs/oracles.md``.

Usage (from the repository root)::

    python3 -m tests.oracles.run_random_models --models 10000 --jobs 2 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Hypothesis seeds of one job are ``seed + job * SEED_STRIDE + k`` (25 models per seed)
SEED_STRIDE = 100_000
#: the heading below which ``docs/oracles.md`` holds what was found (kept by --write-docs)
FINDINGS = "## What the long run found"


@dataclass
class Tally:
    """What one job (or all of them, summed) found."""

    tried: int = 0
    compiled: int = 0
    conservative: int = 0
    integrated: int = 0
    seconds: float = 0.0
    seeds: list[tuple[int, int]] = field(default_factory=list)
    classes: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        """Sum ``other`` into this tally."""
        self.tried += other.tried
        self.compiled += other.compiled
        self.conservative += other.conservative
        self.integrated += other.integrated
        self.seconds = max(self.seconds, other.seconds)
        self.seeds += other.seeds
        self.classes.update(other.classes)
        self.failures += other.failures


def run_job(seed: int, quota: int, minutes: float, compiled_every: int, energy_every: int,
            view_every: int, show: int) -> Tally:
    """Check up to ``quota`` models (Hypothesis seeds from ``seed`` on) within ``minutes``."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.errors import UnsatisfiedAssumption

    from .random_models import RandomModel, models
    from .test_random_models import (
        check_against_oracle,
        test_numpy_and_compiled_agree,
        trajectories_agree_and_conserve_energy,
    )

    deadline = time.monotonic() + 60.0 * minutes
    tally = Tally()
    engines = test_numpy_and_compiled_agree.hypothesis.inner_test

    def done() -> bool:
        return time.monotonic() > deadline or tally.tried >= quota

    def check(model: RandomModel, state_seed: int) -> None:
        if done():
            return
        tally.tried += 1
        if tally.tried % 250 == 0:
            print(f"[seed {seed}] {tally.tried} models, {len(tally.failures)} disagreements",
                  file=sys.stderr, flush=True)
        tally.classes.update(model.classes())
        try:
            view = tally.tried % view_every == 0 if view_every else False
            # None: the expanded SymPy view where the model has at most two bodies
            check_against_oracle(model, state_seed, sympy_view=None if view else False)
            if compiled_every and tally.tried % compiled_every == 0:
                tally.compiled += 1
                engines(model, state_seed)
            if model.is_conservative():
                tally.conservative += 1
                if energy_every and tally.conservative % energy_every == 0:
                    try:
                        trajectories_agree_and_conserve_energy(model, state_seed)
                        tally.integrated += 1
                    except UnsatisfiedAssumption:  # ill-conditioned start, or singular
                        pass
        except Exception:  # every failure is a finding to report
            tally.failures.append((model.text(), traceback.format_exc(limit=3)))
            if len(tally.failures) <= show:
                print(f"DISAGREEMENT (seed {batch})\n{model.text()}{tally.failures[-1][1]}",
                      flush=True)

    start = time.monotonic()
    batch = seed
    while not done():  # batches of 25 models, one Hypothesis seed each
        run = hypothesis_seed(batch)(
            settings(max_examples=25, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))(
                given(models(), st.integers(0, 2**32 - 1))(check)))
        run()
        batch += 1
    tally.seconds = time.monotonic() - start
    tally.seeds.append((seed, batch - 1))
    return tally


def summary(tally: Tally, jobs: int) -> list[str]:
    """The lines printed (and written into the docs) for a run."""
    lines = [f"models tried: {tally.tried} in {tally.seconds:.0f} s on {jobs} processes"]
    lines += [f"  process {k}: Hypothesis seeds {a}…{b}"
              for k, (a, b) in enumerate(sorted(tally.seeds))]
    lines += [
             f"against KanesMethod: {tally.tried}; compiled vs NumPy: {tally.compiled}; "
             f"integrated with the energy checked: {tally.integrated} "
             f"(of {tally.conservative} conservative)",
             "classes covered (models):"]
    lines += [f"  {name}: {count}" for name, count in sorted(tally.classes.items())]
    lines.append(f"disagreements: {len(tally.failures)}")
    lines += [f"  {count} × {kind}" for kind, count in
              Counter(tb.strip().splitlines()[-1][:160] for _, tb in tally.failures)
              .most_common()]
    return lines


def write_docs(lines: list[str], command: str, date: str, where: str) -> None:
    """``docs/oracles.md``: the figure of a long run, with its command, date and machine.

    The docs test runs the command with ``--models 20 --jobs 1`` and checks that it
    prints lines of the same shape (each printed line, numbers aside, is a line here).
    """
    page = ROOT / "docs" / "oracles.md"
    # what a person wrote about the run's findings (below FINDINGS) is kept
    kept = ""
    if page.exists() and FINDINGS in page.read_text(encoding="utf-8"):
        kept = "\n" + FINDINGS + page.read_text(encoding="utf-8").split(FINDINGS, 1)[1]
    page.write_text(
        "# Differential testing on random models\n\n"
        "Random valid models (trees of bodies with random transform chains, full and "
        "diagonal inertia, gravity in any direction, J/D/C/P elements on coordinates, "
        "pseudo-velocities and ω/v projections, time-dependent forces and prescribed "
        "motions, quaternion bodies, velocity formulas) are generated by the Hypothesis "
        "strategy `tests/oracles/random_models.py`. For each, `M` and `F` are compared "
        "with SymPy `physics.mechanics.KanesMethod` built from the same random "
        "description (relative 1e-9), never from kidym's parse; every k-th model also "
        "NumPy vs compiled right-hand sides (1e-12) and every k-th conservative one a "
        "short run of both engines with the oracle's energy along it. CI runs about 260 "
        "such models (`tests/oracles/test_random_models.py`); the long run below was "
        "made once before issue 14 was resolved.\n\n"
        f"Generated by `{command} --write-docs` on {date} ({where}; see "
        "`tests/oracles/run_random_models.py`); do not edit.\n\n"
        "<!-- doc-test: shorten --models 20 --jobs 1 -->\n```text\n"
        f"$ {command}\n" + "\n".join(lines) + "\n```\n" + kept, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the long differential check; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10_000,
                        help="stop after this many models in all")
    parser.add_argument("--minutes", type=float, default=600.0,
                        help="stop after this many minutes")
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compiled-every", type=int, default=25,
                        help="check NumPy vs compiled on every k-th model (0: never)")
    parser.add_argument("--energy-every", type=int, default=20,
                        help="integrate every k-th conservative model with both engines "
                             "and check its energy (0: never)")
    parser.add_argument("--sympy-view-every", type=int, default=10,
                        help="also check the expanded SymPy M and F of every k-th model of "
                             "at most two bodies (slow; 0: never)")
    parser.add_argument("--show", type=int, default=5,
                        help="print the first SHOW disagreements of each process in full "
                             "(Hypothesis mutates a failing model, so one bug shows up "
                             "many times)")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)

    jobs = max(1, args.jobs)
    quotas = [args.models // jobs + (1 if k < args.models % jobs else 0) for k in range(jobs)]
    tasks = [(args.seed + k * SEED_STRIDE, quotas[k], args.minutes, args.compiled_every,
              args.energy_every, args.sympy_view_every, args.show) for k in range(jobs)]
    tally = Tally()
    if jobs == 1:
        tally.add(run_job(*tasks[0]))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            for part in pool.map(run_job, *zip(*tasks)):
                tally.add(part)
    lines = summary(tally, jobs)
    print("\n".join(lines))
    if args.write_docs:
        from tests.lang.fuzzing import machine

        command = (f"python3 -m tests.oracles.run_random_models --models {args.models} "
                   f"--jobs {jobs} --seed {args.seed}")
        write_docs(lines, command, time.strftime("%Y-%m-%d"), machine())
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
