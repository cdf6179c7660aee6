"""The command-line side of the analysis: ``kidym run`` for ``СТАТИКА`` and
``СВОБОДНЫЕ КОЛЕБАНИЯ``, ``kidym modes`` and ``kidym linearize``."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

# the analysis itself (SymPy, SciPy) is imported by the commands, not by ``kidym --help``

_NOT_COMPILED = ("note: the analysis does not integrate in time, so it has no use for the "
                 "compiled engine; it runs on the NumPy/SymEngine side")


def run_analysis(args: argparse.Namespace, model, eq, pairs) -> int:
    """``kidym run`` on a statics or free-vibrations model."""
    from kidym.analysis.modes import modes
    from kidym.analysis.statics import equilibrium
    from kidym.outdir import staged

    if getattr(args, "engine", "numpy") == "compiled" and not getattr(args, "quiet", False):
        print(_NOT_COMPILED, file=sys.stderr)
    unused = [opt for opt, given in (
        ("--t-end", args.t_end is not None), ("--report", args.report),
        ("--animate", args.animate and model.calculation == "STATICS"),
        ("--plot", bool(args.plot)),
        ("--format", args.format != "csv")) if given]
    if unused:
        raise ValueError(", ".join(unused) + " apply to time histories; a "
                         + ("statics" if model.calculation == "STATICS" else "free-vibrations")
                         + " run has none (it writes results.csv, equilibrium.json"
                         + ("" if model.calculation == "STATICS"
                            else ", modes.json, linearization.npz; --animate adds the "
                                 "modes animated, modeK.html") + "): leave "
                         + ("it" if len(unused) == 1 else "them") + " out")
    params = pairs(args.set, "--set")
    initial = pairs(args.initial, "--initial")
    out = Path(args.out) if args.out else Path("kidym-out") / model.name
    if model.calculation == "STATICS":
        eqm = equilibrium(eq, state=initial, parameters=params)
        md = None
        print(f"statics of {model.name}:")
        print(eqm.describe())
    else:
        md = modes(eq, initial, parameters=params)
        eqm = md.equilibrium
        print(f"free vibrations of {model.name}:")
        print(md.describe())
    with staged(out, force=args.force, command="kidym run", keep=[args.model]) as stage:
        files = []
        if eqm is not None:
            files.append(_write_row(stage.path / "results.csv", eq, eqm))
            p = stage.path / "equilibrium.json"
            p.write_text(eqm.to_json(), encoding="utf-8")
            files.append(p)
        if md is not None:
            p = stage.path / "modes.json"
            p.write_text(md.to_json(), encoding="utf-8")
            files.append(p)
            files.append(md.linearization.save_npz(stage.path / "linearization.npz"))
            if args.animate:
                files += _animate_modes(stage.path, model, md,
                                        [k for k, m in enumerate(md.modes, 1) if m.oscillatory])
    for f in files:
        print(f"results: {stage.final(f)}")
    return 0


def _animate_modes(out: Path, model, md, which: list[int],
                   amplitude: float | None = None) -> list[Path]:
    """``modeK.html`` for each mode ``K`` of ``which`` (the viewer, looping over a period)."""
    from kidym.report.animation import write_mode_animation

    if not model.bodies:
        raise ValueError(f"model `{model.name}` has no bodies to animate")
    return [write_mode_animation(out, model, md, k, amplitude=amplitude) for k in which]


def _write_row(path: Path, eq, eqm) -> Path:
    """``results.csv`` of a statics run: one row, ``t``, the state (speeds 0), the
    multipliers, the controls of programmed constraints."""
    names = [str(s) for s in (*eq.coordinates, *eq.speeds)]
    vals = {**eqm.coordinates, **{str(w): 0.0 for w in eq.speeds}}
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["t", *names, *eqm.multipliers, *eqm.controls])
        w.writerow([repr(eqm.t), *(repr(vals[n]) for n in names),
                    *(repr(v) for v in eqm.multipliers.values()),
                    *(repr(v) for v in eqm.controls.values())])
    return path


#: Most points of a continuation (``kidym modes --vary``): each is a linearisation and
#: an eigenproblem, so more is hours of work and memory before the first line.
MAX_VARY_POINTS = 100_000


def _vary(text: str) -> tuple[str, np.ndarray]:
    name, sep, rng = text.partition("=")
    parts = rng.split(":")
    if not sep or len(parts) != 3:
        raise ValueError(f"--vary expects NAME=START:STOP:COUNT, got `{text}`")
    try:
        a, b, n = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise ValueError(f"--vary {name}: `{rng}` is not START:STOP:COUNT") from None
    if not 1 <= n <= MAX_VARY_POINTS:
        raise ValueError(f"--vary {name}: the count must be from 1 to {MAX_VARY_POINTS}, "
                         f"got {n}")
    return name.strip(), np.linspace(a, b, n)


def cmd_modes(args: argparse.Namespace, pairs, load) -> int:
    """``kidym modes MODEL [--vary NAME=A:B:N]``."""
    from kidym.analysis.modes import continuation, modes
    from kidym.eom.equations import derive
    from kidym.outdir import staged

    model = load(args.model)
    eq = derive(model)
    params = pairs(args.set, "--set")
    state = pairs(args.state, "--state")
    statics = {"auto": None, "yes": True, "no": False}[args.statics]
    if not args.vary:
        md = modes(eq, state, parameters=params, statics=statics)
        print(md.describe())
        if not args.animate:
            return 0
        from kidym.analysis.modes import mode_motion

        for k in args.animate:   # refused before anything is written
            mode_motion(md, k, 0.0, n_points=2)
        out = Path(args.out) if args.out else Path("kidym-out") / f"{model.name}-modes"
        with staged(out, force=args.force, command="kidym modes", keep=[args.model]) as stage:
            files = _animate_modes(stage.path, model, md, list(dict.fromkeys(args.animate)),
                                   args.amplitude)
        for f in files:
            print(f"animation: {stage.final(f)}")
        return 0
    if args.animate:
        raise ValueError("--animate shows the modes at one operating point; leave out --vary")
    name, values = _vary(args.vary)
    c = continuation(eq, name, values, state=state, parameters=params, statics=statics)
    print(c.describe())
    out = Path(args.out) if args.out else Path("kidym-out") / f"{model.name}-modes"
    with staged(out, force=args.force, command="kidym modes", keep=[args.model]) as stage:
        files = [c.write_csv(stage.path / "continuation.csv"),
                 c.plot(stage.path / "continuation.png")]
    for f in files:
        print(f"results: {stage.final(f)}")
    return 0


def cmd_linearize(args: argparse.Namespace, pairs, load) -> int:
    """``kidym linearize MODEL``: ``A``, ``B`` as text, LaTeX or JSON; ``--symbolic``
    adds the mechanical form in the parameters (the descriptor form with constraints);
    ``--npz FILE``."""
    from kidym.analysis.linearize import linearize
    from kidym.eom.equations import derive

    model = load(args.model)
    eq = derive(model)
    inputs = [s.strip() for s in (args.inputs or "").split(",") if s.strip()]
    lin = linearize(eq, pairs(args.state, "--state"), parameters=pairs(args.set, "--set"),
                    inputs=inputs)
    sym = lin.symbolic() if args.symbolic else None
    if args.format == "json":
        print(lin.to_json(symbolic=args.symbolic))
    elif args.format == "latex":
        print(lin.to_latex() + ("\n" + sym.to_latex() if sym is not None else ""))
    else:
        print(lin.to_text() + ("\n\n" + sym.to_text() if sym is not None else ""))
    if args.npz:
        print(f"arrays: {lin.save_npz(args.npz)}", file=sys.stderr)
    return 0


def add_parsers(sub, pairs, load, add_force) -> None:
    """The ``modes`` and ``linearize`` subcommands."""
    p = sub.add_parser("modes", help="eigenvalues, frequencies and mode shapes about an "
                                     "equilibrium or a steady motion; --vary for a "
                                     "continuation along a parameter")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--state", action="append", metavar="NAME=VALUE",
                   help="a state value of the operating point (default: the model's "
                        "initial values; repeatable)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override a parameter value (repeatable)")
    p.add_argument("--statics", choices=("auto", "yes", "no"), default="auto",
                   help="solve the equilibrium first: auto (when all speeds are 0), yes, no")
    p.add_argument("--vary", metavar="NAME=START:STOP:COUNT", default=None,
                   help="vary a parameter or a state value; writes continuation.csv and "
                        "continuation.png and locates the stability boundaries")
    p.add_argument("--animate", action="append", type=int, metavar="K",
                   help="write modeK.html, mode K (as numbered in the table) animated in "
                        "the 3-D viewer over one period (repeatable)")
    p.add_argument("--amplitude", type=float, default=None, metavar="EPS",
                   help="--animate: the largest coordinate of the shape moves by EPS "
                        "(default: a body moves by 15%% of the model's size, EPS <= 0.5)")
    p.add_argument("--out", default=None,
                   help="output directory of --vary and --animate (default: "
                        "kidym-out/MODEL_NAME-modes)")
    add_force(p)
    p.set_defaults(func=lambda a: cmd_modes(a, pairs, load))

    p = sub.add_parser("linearize", help="the linearised equations dx = A dx + B du about a "
                                         "state")
    p.add_argument("model", help="model file (.kdm)")
    p.add_argument("--state", action="append", metavar="NAME=VALUE",
                   help="a state value of the operating point (repeatable)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override a parameter value (repeatable)")
    p.add_argument("--inputs", default=None, metavar="P1,P2",
                   help="parameters taken as the inputs u (columns of B)")
    p.add_argument("--format", choices=("text", "latex", "json"), default="text")
    p.add_argument("--symbolic", action="store_true",
                   help="also print the linearised equations in mechanical form with the "
                        "parameters as symbols (with constraints, the descriptor form "
                        "with the multipliers); expanded, so for small models")
    p.add_argument("--npz", default=None, metavar="FILE",
                   help="also write A, B and the names as NumPy arrays")
    p.set_defaults(func=lambda a: cmd_linearize(a, pairs, load))
