"""``kidym export MODEL --c-library DIR | --fmu [-o FILE.fmu] | --casadi [-o FILE.casadi]``.

Imported by ``kidym --help`` to register the subcommand: nothing here imports more than
the standard library until the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def cmd_export(args: argparse.Namespace, load) -> int:
    """Derive the model and hand its equations on in the form asked for."""
    from kidym.outdir import check_replaceable

    inputs = tuple(args.input or ())
    if args.c_library is not None and args.output is not None:
        raise ValueError("--c-library DIR names its directory itself; -o is for --fmu and "
                         "--casadi")
    if args.c_library is None and args.prefix is not None:
        raise ValueError("--prefix names the files and C names of --c-library; the FMU's "
                         "and the CasADi function's names come from the model")
    prefix = args.prefix or "model"
    if args.c_library is not None and inputs:
        raise ValueError("--input is for --fmu and --casadi: the C library takes every "
                         "parameter at run time (the parameter struct)")
    model = load(args.model)
    if args.c_library is not None:
        out = Path(args.c_library)
        check_replaceable(out, force=args.force, keep=[args.model])   # before the work
    else:
        suffix = ".fmu" if args.fmu else ".casadi"
        out = Path(args.output) if args.output else Path("kidym-out") / f"{model.name}{suffix}"
        if out.suffix != suffix:
            raise ValueError(f"-o {out}: the file of --{suffix[1:]} ends in {suffix}")
        if out.is_dir():
            raise ValueError(f"-o {out} is a directory; name the {suffix} file to write")
    from kidym.eom.equations import derive

    eq = derive(model)
    if args.c_library is not None:
        from kidym.export.clib import write_c_library

        files = write_c_library(eq, out, prefix=prefix, force=args.force,
                                keep=[args.model])
        for path in files.values():
            print(f"wrote {path}")
        print(f"build: cc -std=c99 -O2 -c {out / (prefix + '.c')} (link with -lm); "
              f"API in {out / (prefix + '.h')}")
        return 0
    if args.fmu:
        from kidym.export.fmu import write_fmu

        fmu = write_fmu(eq, out, inputs=inputs)
        print(f"wrote {out} (FMI 3.0 Model Exchange and Co-Simulation; {fmu.summary()})")
        return 0
    try:
        from kidym.export.casadi import write_casadi
    except ModuleNotFoundError as exc:
        if exc.name != "kidym.export.casadi":
            raise
        raise ImportError("--casadi: this kidym has no CasADi export (kidym.export.casadi); "
                          "use --fmu or --c-library") from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    write_casadi(eq, out, inputs=inputs)
    print(f"wrote {out}")
    return 0


def add_parser(sub, load, add_force) -> None:
    """The ``export`` subcommand."""
    p = sub.add_parser("export", help="hand the equations on: an FMI 3.0 FMU, a CasADi "
                                      "function or a standalone C library")
    p.add_argument("model", help="model file (.kdm)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--c-library", metavar="DIR", default=None,
                      help="a standalone C99 library: DIR/model.h, model.c, model.json "
                           "(the directory is replaced whole)")
    what.add_argument("--fmu", action="store_true",
                      help="an FMI 3.0 FMU (Model Exchange and Co-Simulation) with a binary "
                           "for this platform and its sources")
    what.add_argument("--casadi", action="store_true",
                      help="a casadi.Function f(x, u, p) -> xdot, saved with its serialiser")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="the file of --fmu or --casadi (default kidym-out/MODEL_NAME.fmu or "
                        ".casadi), written whole")
    p.add_argument("--input", action="append", metavar="NAME",
                   help="--fmu, --casadi: a parameter that becomes an input (a force or "
                        "moment the model gives by its name), repeatable")
    p.add_argument("--prefix", default=None,
                   help="--c-library: the prefix of the files and of every C name (model)")
    add_force(p)
    p.set_defaults(func=lambda a: cmd_export(a, load))
