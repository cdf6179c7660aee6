"""Long differential run over random models (not collected by pytest).

Checks as many random models as fit in a time budget against SymPy's ``KanesMethod`` and,
for every ``--compiled-every``-th model, the NumPy engine against the compiled one; for
every ``--energy-every``-th conservative model, short runs of both engines against each
other and the oracle's energy along them. Prints the number of models tried, the model
classes covered and every disagreement (with the model text). Exit status 1 if any
disagreement was found.

Usage (from the repository root)::

    python3 -m tests.oracles.run_random_models --minutes 10 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter

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


def main(argv: list[str] | None = None) -> int:
    """Run the long differential check; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compiled-every", type=int, default=10,
                        help="check NumPy vs compiled on every k-th model (0: never)")
    parser.add_argument("--energy-every", type=int, default=20,
                        help="integrate every k-th conservative model with both engines "
                             "and check its energy (0: never)")
    parser.add_argument("--show", type=int, default=5,
                        help="print the first SHOW disagreements in full (Hypothesis "
                             "mutates a failing model, so one bug shows up many times)")
    args = parser.parse_args(argv)

    deadline = time.monotonic() + 60.0 * args.minutes
    tried = compiled = conservative = integrated = 0
    classes: Counter[str] = Counter()
    failures: list[tuple[str, str]] = []
    engines = test_numpy_and_compiled_agree.hypothesis.inner_test

    def check(model: RandomModel, state_seed: int) -> None:
        nonlocal tried, compiled, conservative, integrated
        if time.monotonic() > deadline:
            return
        tried += 1
        classes.update(model.classes())
        try:
            check_against_oracle(model, state_seed)
            if args.compiled_every and tried % args.compiled_every == 0:
                compiled += 1
                engines(model, state_seed)
            if model.is_conservative():
                conservative += 1
                if args.energy_every and conservative % args.energy_every == 0:
                    try:
                        trajectories_agree_and_conserve_energy(model, state_seed)
                        integrated += 1
                    except UnsatisfiedAssumption:  # ill-conditioned start, or singular
                        pass
        except Exception:  # every failure is a finding to report
            failures.append((model.text(), traceback.format_exc(limit=3)))
            if len(failures) <= args.show:
                print(f"DISAGREEMENT #{len(failures)}\n{model.text()}{failures[-1][1]}",
                      flush=True)
        if tried % 50 == 0:
            print(f"{tried} models, {len(failures)} disagreements", flush=True)

    start = time.monotonic()
    batch = args.seed
    while time.monotonic() < deadline:  # batches of 25 models, one Hypothesis seed each
        run = hypothesis_seed(batch)(
            settings(max_examples=25, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))(
                given(models(), st.integers(0, 2**32 - 1))(check)))
        run()
        batch += 1
    print(f"models tried: {tried} in {time.monotonic() - start:.0f} s (seeds {args.seed}…"
          f"{batch - 1}); against KanesMethod: {tried}; compiled vs NumPy: {compiled}; "
          f"integrated with the energy checked: {integrated} of {conservative} conservative")
    print("classes covered (models):")
    for name, count in sorted(classes.items()):
        print(f"  {name}: {count}")
    print(f"disagreements: {len(failures)}")
    for kind, count in Counter(tb.strip().splitlines()[-1][:160]
                               for _, tb in failures).most_common():
        print(f"  {count} × {kind}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
