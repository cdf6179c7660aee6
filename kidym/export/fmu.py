"""An FMI 3.0 FMU of a model (``kidym export MODEL --fmu``): Model Exchange and
Co-Simulation.

The FMU is the standalone C library (:mod:`.clib`) with the FMI entry points over it
(:mod:`.fmu_c`), compiled for this platform, and its sources:

* ``modelDescription.xml`` — deterministic: the states named as in the model with their
  derivatives ``der(NAME)``, the parameters (``tunable``, with the model's units), the
  parameters named by ``inputs`` as continuous inputs, the outputs (the model's
  ``ПОКАЗАТЬ`` quantities, ``energy`` and ``energy't``), the model's events as event
  indicators, the default experiment of ``ВРЕМЯ``; the analytic Jacobian as directional
  derivatives ``∂der(x)/∂x`` (not for a model with controls);
* ``binaries/<arch>-linux/<id>.so`` — built with ``cc -std=c99 -O2 -Wall -Wextra
  -pedantic -Werror``; ``sources/`` with ``buildDescription.xml`` to build it elsewhere.

Events: an indicator that crosses zero in the event's direction (the FMU keeps the sign
each had after the last event) applies its reset in ``fmi3UpdateDiscreteStates``, in
event order, or ends the run (a terminal event); a crossing in the other direction
changes nothing. Constraints (``УРАВНЕНИЯ``, ``КАЧЕНИЕ``, ``СОВПАДЕНИЕ``): the
augmented system of the compiled engine, started from kidym's consistent initial state;
after a step whose constraints' residual exceeds kidym's tolerance (1e-9) the FMU asks
for a step event and projects the state back, as the engines do at their outputs.

Co-Simulation: ``fmi3DoStep`` integrates with the embedded Dormand–Prince 5(4) pair (error
per unit step within the tolerance of ``fmi3EnterInitializationMode``, default 1e-8),
locates events by re-stepping from the step's start and handles them as above, and
projects a constrained state after every step.
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from kidym.eom.equations import Equations
from kidym.errors import CompileError
from kidym.export.clib import CLibrary, c_library, parameter_units
from kidym.export.fmu_c import FMI3_HEADERS, fmu_source
from kidym.model.inputs import refuse as refuse_inputs
from kidym.symbolic.identifiers import IdentifierMap

#: kidym's tolerance of the constraints' residual (``Stabilization().tolerance``).
PROJECTION_TOLERANCE = 1e-9
_FLAGS = ("-std=c99", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra",
          "-pedantic", "-Werror")


@dataclass(frozen=True)
class FMU:
    """What :func:`fmu_archive` built.

    Attributes
    ----------
    data : bytes
        The ``.fmu`` (a zip archive; deterministic but for the compiler's output).
    model_description : str
        Its ``modelDescription.xml``.
    model_identifier : str
        The name of the binary and of the FMU's functions' library.
    library : CLibrary
        The C library inside.
    inputs : tuple of str
        The parameters made inputs.
    platform : str
        The binary's platform tuple (``x86_64-linux``).
    """

    data: bytes
    model_description: str
    model_identifier: str
    library: CLibrary
    inputs: tuple[str, ...]
    platform: str

    def summary(self) -> str:
        """One line: what the FMU holds."""
        lib = self.library
        return (f"{len(lib.state_names)} states, {len(lib.parameter_names) - len(self.inputs)} "
                f"parameters, {len(self.inputs)} inputs, {len(lib.output_names)} outputs, "
                f"{len(lib.event_names)} event indicators")


def platform_tuple() -> str:
    """The FMI 3.0 platform tuple of this machine (``x86_64-linux``)."""
    system = platform.system()
    if system != "Linux":
        raise ValueError(f"kidym builds FMU binaries on Linux only (this is {system}); "
                         "the C library (--c-library) builds anywhere")
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine) + "-linux"


def start_state(eq: Equations) -> np.ndarray:
    """The state a kidym run of the model starts from: the model's initial values, and
    with constraints the consistent state kidym solves from them — the one preparation
    of a run (:func:`kidym.simulation.spec.prepare_run`), as every entry point."""
    from kidym.eom.constraints import Stabilization
    from kidym.simulation.simulate import NumpySystem
    from kidym.simulation.spec import prepare_run

    spec = prepare_run(NumpySystem.build(eq),
                       constraints=Stabilization(tolerance=PROJECTION_TOLERANCE))
    return np.asarray(spec.y0, float)


def model_description(eq: Equations, lib: CLibrary, *, identifier: str, token: str,
                      start: Sequence[float], inputs: Sequence[str]) -> str:
    """``modelDescription.xml`` (deterministic; value references as :mod:`.fmu_c`)."""
    nx, npar = len(lib.state_names), len(lib.parameter_names)
    units = parameter_units(eq, lib.parameter_names)
    t0, t1 = eq.model.time_span()
    taken = {*lib.state_names, *lib.parameter_names}
    time_name = "time" if "time" not in taken else "kidym.time"
    rows = [f'    <Float64 name="{time_name}" valueReference="0" causality="independent" '
            'variability="continuous" description="time"/>']
    for i, (n, v) in enumerate(zip(lib.state_names, start)):
        rows.append(f"    <Float64 name={quoteattr(n)} valueReference=\"{1 + i}\" "
                    f'causality="local" variability="continuous" initial="exact" '
                    f'start="{float(v)!r}"/>')
    for i, n in enumerate(lib.state_names):
        rows.append(f"    <Float64 name={quoteattr(f'der({n})')} valueReference="
                    f'"{1 + nx + i}" causality="local" variability="continuous" '
                    f'initial="calculated" derivative="{1 + i}"/>')
    for i, (n, v, u) in enumerate(zip(lib.parameter_names, lib.parameter_defaults, units)):
        unit = f" unit={quoteattr(u)}" if u else ""
        kind = ('causality="input" variability="continuous"' if n in inputs
                else 'causality="parameter" variability="tunable" initial="exact"')
        rows.append(f"    <Float64 name={quoteattr(n)} valueReference=\"{1 + 2 * nx + i}\" "
                    f'{kind} start="{float(v)!r}"{unit}/>')
    out0 = 1 + 2 * nx + npar
    outputs = []
    for i, n in enumerate(lib.output_names):
        if n in taken or n == time_name:      # (a state shown again: it is there already)
            continue
        taken.add(n)
        outputs.append(out0 + i)
        rows.append(f"    <Float64 name={quoteattr(n)} valueReference=\"{out0 + i}\" "
                    'causality="output" variability="continuous" initial="calculated"/>')
    ev0 = out0 + len(lib.output_names)
    indicators = []
    for k, n in enumerate(lib.event_names):
        name = f"event indicator {n}"
        indicators.append(ev0 + k)
        rows.append(f"    <Float64 name={quoteattr(name)} valueReference=\"{ev0 + k}\" "
                    'causality="local" variability="continuous" initial="calculated"/>')
    structure = ([f'    <Output valueReference="{v}"/>' for v in outputs]
                 + [f'    <ContinuousStateDerivative valueReference="{1 + nx + i}"/>'
                    for i in range(nx)]
                 + [f'    <InitialUnknown valueReference="{v}"/>'
                    for v in (*outputs, *(1 + nx + i for i in range(nx)))]
                 + [f'    <EventIndicator valueReference="{v}"/>' for v in indicators])
    unit_defs = sorted({u for u in units if u})
    jac = "true" if lib.code.jacobian else "false"
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="3.0" modelName={quoteattr(eq.model.name)} '
             f'instantiationToken="{token}" generationTool="kidym" '
             'variableNamingConvention="flat" description="equations of motion derived by '
             'kidym">',
             f'  <ModelExchange modelIdentifier="{identifier}" '
             f'providesDirectionalDerivatives="{jac}" needsCompletedIntegratorStep="'
             f'{"true" if eq.constraints is not None else "false"}"/>',
             f'  <CoSimulation modelIdentifier="{identifier}" '
             'canHandleVariableCommunicationStepSize="true" '
             f'providesDirectionalDerivatives="{jac}" hasEventMode="false"/>']
    if unit_defs:
        parts += ["  <UnitDefinitions>",
                  *(f"    <Unit name={quoteattr(u)}/>" for u in unit_defs),
                  "  </UnitDefinitions>"]
    parts += [f'  <DefaultExperiment startTime="{float(t0)!r}" stopTime="{float(t1)!r}"/>',
              "  <ModelVariables>", *rows, "  </ModelVariables>",
              "  <ModelStructure>", *structure, "  </ModelStructure>",
              "</fmiModelDescription>", ""]
    return "\n".join(parts)


def _build_description(identifier: str, prefix: str) -> str:
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<fmiBuildDescription fmiVersion="3.0">',
        f'  <BuildConfiguration modelIdentifier="{identifier}">',
        '    <SourceFileSet language="C99">',
        f'      <SourceFile name="{prefix}.c"/>',
        '      <SourceFile name="fmu.c"/>',
        "    </SourceFileSet>",
        '    <Library name="m"/>',
        "  </BuildConfiguration>",
        "</fmiBuildDescription>", ""])


def _compile(sources: dict[str, str], identifier: str) -> bytes:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise CompileError(f"kidym export --fmu needs a C compiler (`{cc}`; set $CC) to build "
                           "the FMU's binary: install one (bash .ci/system-deps)",
                           kind="toolchain")
    with tempfile.TemporaryDirectory(prefix="kidym-fmu-") as tmp:
        for name, text in sources.items():
            Path(tmp, name).write_text(text, encoding="utf-8")
        cmd = [cc, *_FLAGS, "-I.", "model.c", "fmu.c", "-o", f"{identifier}.so", "-lm"]
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise CompileError("the FMU's C did not compile: an internal error of kidym, "
                               "please report it", command=cmd, output=r.stderr,
                               kind="internal")
        return Path(tmp, f"{identifier}.so").read_bytes()


def _zip(files: dict[str, bytes]) -> bytes:
    """A zip archive of ``files`` with fixed dates and modes: the same files give the same
    bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    return buf.getvalue()


def fmu_archive(eq: Equations, *, inputs: Sequence[str] = ()) -> FMU:
    """Build the FMU of ``eq`` (see the module docstring).

    Parameters
    ----------
    eq : Equations
        Derived equations.
    inputs : sequence of str
        Parameters to expose as continuous inputs (``causality="input"``): forces or
        moments the model gives by a parameter's name, set by the importer at every step.

    Returns
    -------
    FMU

    Raises
    ------
    ValueError
        An input that is not a parameter; no C compiler; not Linux.
    kidym.CompileError
        kidym's C did not compile (an internal error).
    """
    refuse_inputs(eq.model, "the FMU")
    arch = platform_tuple()
    lib = c_library(eq, prefix="model")
    unknown = [n for n in inputs if n not in lib.parameter_names]
    if unknown:
        raise ValueError(f"--input {unknown[0]}: not a parameter of model `{eq.model.name}`; "
                         "its parameters are " + ", ".join(lib.parameter_names))
    identifier = IdentifierMap()(eq.model.name)
    start = start_state(eq)
    start_c = [repr(float(v)) for v in start]
    # the token: a digest of everything the binary and the description depend on
    digest = hashlib.sha256("\0".join([lib.source, lib.header, *start_c, *inputs,
                                       identifier]).encode("utf-8")).hexdigest()
    token = "{" + "-".join([digest[:8], digest[8:12], digest[12:16], digest[16:20],
                            digest[20:32]]) + "}"
    fmu_c = fmu_source("model", start=start_c, token=token,
                       constrained=eq.constraints is not None,
                       tolerance=PROJECTION_TOLERANCE)
    headers = {p.name: p.read_text("utf-8") for p in sorted(FMI3_HEADERS.glob("fmi3*.h"))}
    sources = {"model.h": lib.header, "model.c": lib.source, "fmu.c": fmu_c, **headers}
    binary = _compile(sources, identifier)
    description = model_description(eq, lib, identifier=identifier, token=token,
                                    start=start, inputs=tuple(inputs))
    files = {"modelDescription.xml": description.encode("utf-8"),
             f"binaries/{arch}/{identifier}.so": binary,
             "sources/buildDescription.xml":
                 _build_description(identifier, "model").encode("utf-8"),
             "documentation/licenses/fmi3-headers.txt":
                 (FMI3_HEADERS / "LICENSE.txt").read_bytes(),
             **{f"sources/{n}": t.encode("utf-8") for n, t in sources.items()}}
    return FMU(data=_zip(files), model_description=description, model_identifier=identifier,
               library=lib, inputs=tuple(inputs), platform=arch)


def write_fmu(eq: Equations, path: str | Path, *, inputs: Sequence[str] = ()) -> FMU:
    """Build the FMU of ``eq`` (:func:`fmu_archive`) and write it to ``path``, whole.

    Returns
    -------
    FMU
    """
    from kidym.simulation.result import write_atomically

    fmu = fmu_archive(eq, inputs=inputs)
    Path(path).parent.mkdir(parents=True, exist_ok=True)   # (once it is built)
    write_atomically(path, fmu.data)
    return fmu
