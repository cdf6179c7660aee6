"""A standalone C99 library of a model's equations, to embed in a controller or a tool.

``kidym export MODEL --c-library DIR`` (:func:`write_c_library`) writes three files:

* ``model.h`` — the API: sizes, index macros of the states, parameters, outputs and
  events (``MODEL_X_phi1``, ``MODEL_P_m1`` …, made of kidym's safe identifiers), the
  parameter struct and the functions below, each with its contract;
* ``model.c`` — the model's routines exactly as the compiled engine generates them
  (:func:`kidym.codegen.emit.generate_c`: hoisted constants, CSE, the solve of
  ``M ẇ = F`` or the augmented solve of a constrained model, the analytic Jacobian),
  under names of the library, and the API over them;
* ``model.json`` — the human names (as written in the model, any Unicode), units and
  default values beside their identifiers, for tools.

No Python and no SUNDIALS: ``model.c`` needs ``<math.h>`` and ``<stdlib.h>`` only. The
text is deterministic (the same equations give the same bytes) and compiles without a
warning under ``cc -std=c99 -Wall -Wextra -pedantic -Werror``. No text of the model
reaches the C as code or comment: identifiers come from
:class:`kidym.symbolic.identifiers.IdentifierMap`, comments show names through
:func:`kidym.symbolic.identifiers.comment_text`, and the name tables are string
literals written by :func:`c_string`, every byte outside ``[A-Za-z0-9_ ]`` as an octal
escape.

The API (prefix ``model`` by default)::

    typedef struct model_parameters { double value[..]; double constants[..]; } model_parameters;
    void model_default_parameters(model_parameters *p);   /* the model's values */
    void model_update_parameters(model_parameters *p);    /* after changing p->value */
    void model_default_state(double *x);                  /* the model's INITIAL values */
    int  model_rhs(double t, const double *x, const model_parameters *p, double *xdot);
    void model_outputs(double t, const double *x, const model_parameters *p, double *out);
    int  model_jacobian(double t, const double *x, const model_parameters *p, double *J);
    void model_event_indicators(double t, const double *x, const model_parameters *p,
                                double *g);
    void model_reset(int k, double t, const double *x, const model_parameters *p,
                     double *xnew);
    void model_set_baumgarte(double alpha, double beta);   /* constrained models */
    int  model_project(double t, double *x, const model_parameters *p, double tol);
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kidym.codegen.emit import PART_PREAMBLE, CCode, generate_c
from kidym.eom.equations import Equations
from kidym.model.inputs import refuse as refuse_inputs
from kidym.symbolic.identifiers import IdentifierMap, comment_text

_PREFIX = re.compile(r"[a-z][a-z0-9_]{0,30}\Z")
_EXTERNAL = re.compile(r"\bkidym_\w+")


def c_string(text: str) -> str:
    """``text`` as a C string literal that holds its UTF-8 bytes and nothing else.

    Every byte outside ``[A-Za-z0-9_ ]`` is an octal escape (``\\ooo``, always three
    digits, so no following character can extend it): quotes, backslashes, ``?`` (no
    trigraph), ``*/``, control and bidi characters cannot act as C.
    """
    safe = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ "
    return '"' + "".join(chr(b) if b in safe else f"\\{b:03o}"
                         for b in text.encode("utf-8")) + '"'


def _number(value: float, what: str) -> str:
    if not math.isfinite(value):
        raise ValueError(f"{what} is {value}: a C library needs finite default values")
    return repr(float(value))


def _solved(eq: Equations) -> str:
    """How the library finds ``ẇ`` (a line of the header's comment)."""
    if eq.constraints is not None:
        return (f"with {eq.m} constraint(s), solved as [M -G^T; G 0][w'; lambda] = "
                "[F; gamma]")
    if eq.controls is not None:
        return ("with the controls u of the programmed constraints: M w' = F + H u, "
                "G w' = b, u of least norm")
    return "solved inside (M is symmetric positive definite)"


def parameter_units(eq: Equations, names: Sequence[str]) -> list[str]:
    """The unit of each parameter: in the model's base units where it has
    ``РАЗМЕРНОСТИ`` (values converted: ``Model.units``), else as written (values as
    written); ``""`` where none is given."""
    written = {p.name: p.unit for p in eq.model.parameters}
    return [eq.model.units.get(n) or written.get(n) or "" for n in names]


@dataclass(frozen=True)
class CLibrary:
    """The files of a standalone C library of one model (:func:`c_library`).

    Attributes
    ----------
    prefix : str
        Prefix of every external name (``model`` → ``model_rhs``, ``MODEL_NX``); the
        files are ``<prefix>.h``, ``<prefix>.c`` and ``<prefix>.json``.
    header, source, metadata : str
        Their texts (deterministic).
    code : CCode
        The generated routines inside ``source``.
    state_names, parameter_names, output_names, event_names : tuple of str
        The layouts of ``x``, ``p->value``, ``out`` and ``g``, names as in the model.
    parameter_defaults : tuple of float
        The model's parameter values.
    initial_state : tuple of float
        The model's initial values (0 where it gives none).
    """

    prefix: str
    header: str
    source: str
    metadata: str
    code: CCode
    state_names: tuple[str, ...]
    parameter_names: tuple[str, ...]
    output_names: tuple[str, ...]
    event_names: tuple[str, ...]
    parameter_defaults: tuple[float, ...]
    initial_state: tuple[float, ...]

    @property
    def files(self) -> dict[str, str]:
        """File name → text."""
        return {f"{self.prefix}.h": self.header, f"{self.prefix}.c": self.source,
                f"{self.prefix}.json": self.metadata}

    @property
    def n_constants(self) -> int:
        """Length of the ``constants`` array of the parameter struct (at least 1)."""
        return max(self.code.n_constants, 1)


def _macros(kind: str, names: Sequence[str], upper: str) -> tuple[list[str], list[str]]:
    """``#define PREFIX_<kind>_<identifier> <index>`` lines and the identifiers."""
    ids = IdentifierMap()
    idents = [ids(n) for n in names]
    width = max((len(i) for i in idents), default=0)
    return ([f"#define {upper}_{kind}_{i:<{width}} {k}  /* {comment_text(n)} */"
             for k, (i, n) in enumerate(zip(idents, names))], idents)


def _table(ctype: str, name: str, items: Sequence[str]) -> str:
    body = ",\n    ".join(items) if items else "0"
    return f"const {ctype} {name}[{max(len(items), 1)}] = {{\n    {body}\n}};\n"


def c_library(eq: Equations, *, prefix: str = "model") -> CLibrary:
    """The standalone C library of ``eq`` (see the module docstring).

    Parameters
    ----------
    eq : Equations
        Derived equations (``q̇ = B w + β``, ``M ẇ = F``; with constraints the augmented
        system, with controls of programmed constraints their solve).
    prefix : str
        Prefix of every external name and of the file names: lower-case ASCII letters,
        digits and ``_``, starting with a letter, not ``kidym…`` or ``kd…`` (those are
        the routines' own).

    Returns
    -------
    CLibrary

    Raises
    ------
    ValueError
        A bad prefix, a model without motion, a parameter without a finite value, external
        inputs (``ВХОДЫ``).
    """
    refuse_inputs(eq.model, "the C library (whose parameters are set at run time)",
                  listed=False)
    if not _PREFIX.match(prefix) or prefix.startswith(("kidym", "kd")):
        raise ValueError(f"C library prefix {prefix!r}: use lower-case ASCII letters, digits "
                         "and `_`, starting with a letter (at most 31), not `kidym…` or `kd…`")
    jacobian = eq.controls is None   # (the controls' solve is not differentiated)
    code = generate_c(eq, jacobian=jacobian)
    model = eq.model
    up = prefix.upper()
    states, params = code.state_names, code.parameter_names
    outputs, events = code.output_names, code.event_names
    values = model.parameter_values
    defaults = tuple(float(values[n]) for n in params)
    initial = model.initial_values()
    x0 = tuple(float(initial.get(n, 0.0)) for n in states)
    units = parameter_units(eq, params)
    digest = hashlib.sha256((model.source or "").encode("utf-8")).hexdigest()[:16]

    x_macros, x_ids = _macros("X", states, up)
    p_macros, p_ids = _macros("P", params, up)
    o_macros, o_ids = _macros("OUT", outputs, up)
    e_macros, e_ids = _macros("EV", events, up)
    np_, nc = len(params), code.n_constants
    t0, t1 = model.time_span()

    header = f"""\
/* generated by kidym, do not edit.
 * A standalone C99 library of the equations of motion of model `{comment_text(model.name)}`
 * (model source sha256 {digest}): the Cauchy form x' = f(t, x, p) with
 * x = [q (coordinates), w (speeds)], q' = B(q,t) w + beta(q,t), M(q,t) w' = F(q,w,t)
 * {_solved(eq)}.
 * Needs <math.h> and <stdlib.h> only: cc -std=c99 -O2 -c {prefix}.c, link with -lm.
 * Names as written in the model: {prefix}_state_names and the other tables (UTF-8),
 * and {prefix}.json.
 */
#ifndef {up}_H
#define {up}_H

#define {up}_NQ {eq.n_q}    /* coordinates q */
#define {up}_NW {eq.n_w}    /* speeds w */
#define {up}_NX {eq.n_q + eq.n_w}    /* states x = [q, w] */
#define {up}_NP {np_}    /* parameters */
#define {up}_NOUT {len(outputs)}    /* outputs */
#define {up}_NEV {len(events)}    /* event indicators */
#define {up}_NCONSTRAINTS {eq.m}    /* holonomic or velocity constraints */
#define {up}_HAS_JACOBIAN {int(jacobian)}    /* {prefix}_jacobian is analytic */
#define {up}_T_START {_number(t0, "the start time")}
#define {up}_T_END {_number(t1, "the end time")}

/* indices into x */
{chr(10).join(x_macros)}
/* indices into p->value */
{chr(10).join(p_macros) or "/* (none) */"}
/* indices into out */
{chr(10).join(o_macros)}
/* indices into g (event indicators) */
{chr(10).join(e_macros) or "/* (none) */"}

/* The parameters: value[] in model order, and the constants derived from them (the
   parameter-only parts of the equations, computed once by {prefix}_update_parameters). */
typedef struct {prefix}_parameters {{
    double value[{max(np_, 1)}];
    double constants[{max(nc, 1)}];
}} {prefix}_parameters;

extern const char *const {prefix}_state_names[{up}_NX];
extern const char *const {prefix}_parameter_names[{max(np_, 1)}];
extern const char *const {prefix}_parameter_units[{max(np_, 1)}];  /* "" where none */
extern const char *const {prefix}_output_names[{max(len(outputs), 1)}];
extern const char *const {prefix}_event_names[{max(len(events), 1)}];
extern const double {prefix}_parameter_defaults[{max(np_, 1)}];
/* the direction of each event: -1 falling, +1 rising, 0 both */
extern const int {prefix}_event_directions[{max(len(events), 1)}];
/* what each event does: 0 recorded only, 1 ends the run (terminal), 2 resets the state
   ({prefix}_reset) */
extern const int {prefix}_event_actions[{max(len(events), 1)}];

/* p->value = the model's values, then {prefix}_update_parameters(p). */
void {prefix}_default_parameters({prefix}_parameters *p);
/* Recompute p->constants; call it after changing p->value. */
void {prefix}_update_parameters({prefix}_parameters *p);
/* x = the model's initial values (0 where the model gives none; formulas of parameters
   evaluated with the model's values; with constraints they need not satisfy them: see
   {prefix}_project). */
void {prefix}_default_state(double *x);
/* xdot[{up}_NX] = f(t, x, p). Returns 0, 1 if M (or the constraints' system) is
   singular, 2 if xdot is not finite. */
int {prefix}_rhs(double t, const double *x, const {prefix}_parameters *p, double *xdot);
/* out[{up}_NOUT]: the model's outputs, then energy and its rate energy't where the model
   does not define them. */
void {prefix}_outputs(double t, const double *x, const {prefix}_parameters *p, double *out);
/* J[{up}_NX * {up}_NX] = d xdot / d x, row-major, analytic (formed by the chain rule, not
   by differences). Returns 0, 1 singular, 2 not finite, 3 out of memory, -1 if the
   library has none ({up}_HAS_JACOBIAN is 0: a model with controls). */
int {prefix}_jacobian(double t, const double *x, const {prefix}_parameters *p, double *J);
/* g[{up}_NEV]: the event indicators (an event happens where g[k] crosses zero in the
   direction {prefix}_event_directions[k]). */
void {prefix}_event_indicators(double t, const double *x, const {prefix}_parameters *p,
                            double *g);
/* xnew = x after the reset of event k (x itself for an event without a reset). */
void {prefix}_reset(int k, double t, const double *x, const {prefix}_parameters *p,
                 double *xnew);
/* Constrained models: Baumgarte's terms in the constraints' rows,
   G w' = gamma - 2 alpha c - beta^2 Phi (default 0, 0: none). Process-wide. */
void {prefix}_set_baumgarte(double alpha, double beta);
/* Constrained models: where the constraints' residual exceeds tol, move x back onto
   Phi = 0 (Gauss-Newton) and G w + g = 0 (least change of w in the metric M).
   Returns 0 unchanged, 1 projected, 2 failed. */
int {prefix}_project(double t, double *x, const {prefix}_parameters *p, double tol);

#endif
"""

    internal = sorted(set().union(*(_EXTERNAL.findall(s) for s in code.sources)))
    # under `kidym_<prefix>_…`: unique per library, and no identifier of a model name can
    # be one (IdentifierMap never gives `kidym_…`), so no local of a routine hides one
    renames = "\n".join(f"#define {n} kidym_{prefix}_{n[len('kidym_'):]}" for n in internal)
    parts = []
    for part in code.parts:
        if not part.startswith(PART_PREAMBLE):
            raise AssertionError("a part of the generated C without its preamble")
        parts.append(part[len(PART_PREAMBLE):].lstrip("\n"))

    def strings(names: Sequence[str]) -> list[str]:
        return [c_string(n) for n in names]

    source = "\n".join([
        f"/* generated by kidym, do not edit: the C library of model "
        f"`{comment_text(model.name)}`; API in {prefix}.h */",
        "/* kidym's routines (kidym/codegen/emit.py), under names of this library; the",
        f"   header comes after them, so that none of its macros ({up}_X_phi …) can meet",
        "   an identifier of the model's own names inside them */",
        renames, "",
        code.source,
        *parts,
        "/* ---------------------------------------------------------------- API */",
        f'#include "{prefix}.h"\n#include <stdlib.h>\n',
        _table("char *const", f"{prefix}_state_names", strings(states)),
        _table("char *const", f"{prefix}_parameter_names", strings(params)),
        _table("char *const", f"{prefix}_parameter_units", strings(units)),
        _table("char *const", f"{prefix}_output_names", strings(outputs)),
        _table("char *const", f"{prefix}_event_names", strings(events)),
        _table("double", f"{prefix}_parameter_defaults",
               [_number(v, f"parameter `{n}`") for n, v in zip(params, defaults)]),
        _table("int", f"{prefix}_event_directions", [str(d) for d in code.event_directions]),
        _table("int", f"{prefix}_event_actions", [str(a) for a in code.event_actions]),
        f"""\
static const double kidym_{prefix}_initial[{up}_NX] = {{
    {", ".join(_number(v, f"the initial value of `{n}`") for n, v in zip(states, x0))}
}};

void {prefix}_default_parameters({prefix}_parameters *p) {{
    int i;
    for (i = 0; i < {np_}; ++i) p->value[i] = {prefix}_parameter_defaults[i];
    {prefix}_update_parameters(p);
}}

void {prefix}_update_parameters({prefix}_parameters *p) {{
    kidym_constants(p->value, p->constants);
}}

void {prefix}_default_state(double *x) {{
    int i;
    for (i = 0; i < {up}_NX; ++i) x[i] = kidym_{prefix}_initial[i];
}}

int {prefix}_rhs(double t, const double *x, const {prefix}_parameters *p, double *xdot) {{
    return kidym_rhs(t, x, p->value, p->constants, xdot);
}}

void {prefix}_outputs(double t, const double *x, const {prefix}_parameters *p, double *out) {{
    kidym_outputs(t, x, p->value, p->constants, out);
}}

int {prefix}_jacobian(double t, const double *x, const {prefix}_parameters *p, double *J) {{
    return kidym_jac(t, x, p->value, p->constants, J);
}}

void {prefix}_event_indicators(double t, const double *x, const {prefix}_parameters *p,
                            double *g) {{
    kidym_events(t, x, p->value, p->constants, g);
}}

void {prefix}_reset(int k, double t, const double *x, const {prefix}_parameters *p,
                 double *xnew) {{
    kidym_reset(k, t, x, p->value, p->constants, xnew);
}}

void {prefix}_set_baumgarte(double alpha, double beta) {{
    kidym_stabilization[0] = 2.0*alpha;
    kidym_stabilization[1] = beta*beta;
}}

int {prefix}_project(double t, double *x, const {prefix}_parameters *p, double tol) {{
    double keep = kidym_stabilization[2];
    int status;
    kidym_stabilization[2] = tol;
    status = kidym_project(t, x, p->value, p->constants);
    kidym_stabilization[2] = keep;
    return status;
}}
"""])
    meta = {
        "model": model.name, "model_source_sha256": digest, "prefix": prefix,
        "n_q": eq.n_q, "n_w": eq.n_w, "constraints": eq.m, "jacobian": jacobian,
        "t_start": t0, "t_end": t1,
        "states": [{"name": n, "macro": f"{up}_X_{i}", "initial": v}
                   for n, i, v in zip(states, x_ids, x0)],
        "parameters": [{"name": n, "macro": f"{up}_P_{i}", "default": v,
                        **({"unit": u} if u else {})}
                       for n, i, v, u in zip(params, p_ids, defaults, units)],
        "outputs": [{"name": n, "macro": f"{up}_OUT_{i}"} for n, i in zip(outputs, o_ids)],
        "events": [{"name": n, "macro": f"{up}_EV_{i}", "direction": d,
                    "action": ("record", "terminal", "reset")[a]}
                   for n, i, d, a in zip(events, e_ids, code.event_directions,
                                         code.event_actions)],
    }
    return CLibrary(prefix=prefix, header=header, source=source,
                    metadata=json.dumps(meta, ensure_ascii=False, indent=2) + "\n",
                    code=code, state_names=states, parameter_names=params,
                    output_names=outputs, event_names=events, parameter_defaults=defaults,
                    initial_state=x0)


def write_c_library(eq: Equations, directory: str | Path, *, prefix: str = "model",
                    force: bool = False, keep: Sequence[str | Path] = ()) -> dict[str, Path]:
    """Write the C library of ``eq`` (:func:`c_library`) into ``directory``, whole.

    The directory is published as ``kidym run`` publishes its output
    (:func:`kidym.outdir.staged`): all files or, on any failure, the directory as it was.

    Parameters
    ----------
    eq : Equations
    directory : path
        Created or replaced (a directory kidym did not write needs ``force``).
    prefix : str
        As :func:`c_library`.
    force : bool
        Replace a directory that holds files kidym did not write.
    keep : sequence of path
        Files that must survive (the model being read): a directory holding one is
        never replaced.

    Returns
    -------
    dict of str to Path
        File name → where it now is.
    """
    from kidym.outdir import staged
    from kidym.simulation.result import write_atomically

    lib = c_library(eq, prefix=prefix)
    written = {}
    with staged(directory, force=force, command="kidym export --c-library",
                keep=keep) as stage:
        for name, text in lib.files.items():
            written[name] = stage.final(write_atomically(stage.path / name, text))
    return written
