"""The cache keyed on the equations: a cached model starts without generating C again.

:func:`kidym.codegen.build` keys a library on its C source, so a cached run still
paid for generating that source (seconds for a big model: most of a cached start).
This index maps a fingerprint of what the C is generated *from* — the named
quantities of the equations and their roots, the outputs, the events, the folded
parameter values, the compiler flags, and the source of kidym's code generator
itself — to the library's layout (:class:`~kidym.codegen.emit.CCode` without
re-deriving it); the source is read back from the cache. An entry is used only
when its library is still whole (:func:`kidym.codegen.build.cached_library`), and
is written atomically after a successful build.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

from kidym.cache import source_key
from kidym.codegen import aba_c, emitter
from kidym.codegen.build import cache_dir, cached_library
from kidym.codegen.cprint import OpCount
from kidym.codegen.emit import CCode
from kidym.eom.equations import Equations
from kidym.eom.events import Event, all_events, parse_expression

#: The modules whose code decides the generated C (besides the equations).
_GENERATOR = ("codegen", "symbolic")


@functools.cache
def _generator_fingerprint() -> str:
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for sub in _GENERATOR:
        for path in sorted((root / sub).glob("*.[pc]*")):
            if path.suffix in (".py", ".c"):
                h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


#: Fingerprints already taken, per Equations object (``engine="auto"`` asks twice per
#: run: to choose the engine, then to build; a big model's costs tenths of a second).
_KEYS: weakref.WeakKeyDictionary[Equations, dict[str, str]] = weakref.WeakKeyDictionary()


def equations_key(eq: Equations, *, events: Sequence[Event] = (),
                  fold: bool | Mapping[str, float] = False,
                  flags: Sequence[str] = (), jacobian: bool = False) -> str:
    """A fingerprint of everything the library of ``eq`` is generated and built from
    (``jacobian``: with the analytic Jacobian, :func:`kidym.codegen.generate_c`)."""
    # the sizes that decide how routines are split and long sums summed (module settings
    # a benchmark or a test may change) shape the source as much as the equations do
    sizes = (emitter.SPLIT_ABOVE, emitter.PART_STATEMENTS, emitter.SUM_TERMS,
             aba_c.RECURSIVE_FROM)
    events = all_events(eq, events)   # the model's own (СОБЫТИЯ) first, as generate_c
    options = repr((list(map(repr, events)), fold, list(flags), sizes, bool(jacobian)))
    known = _KEYS.setdefault(eq, {})
    if options not in known:
        known[options] = _fingerprint(eq, events=events, fold=fold, flags=flags,
                                      sizes=sizes, jacobian=bool(jacobian))
    return known[options]


def _fingerprint(eq: Equations, *, events: Sequence[Event],
                 fold: bool | Mapping[str, float], flags: Sequence[str],
                 sizes: tuple[int, ...], jacobian: bool = False) -> str:
    outputs = dict(eq.outputs_named)
    outputs.setdefault("energy", eq.energy_named)
    roots = [*eq.roots(), *outputs.values()]
    # what the events use: a named quantity only an event needs is part of the library
    for e in events:
        roots.append(parse_expression(eq, e.function, "event"))
        roots += [parse_expression(eq, v, "reset") for v in e.reset.values()]
    h = hashlib.sha256()

    def put(*items: object) -> None:
        for item in items:
            h.update(str(item).encode("utf-8"))
            h.update(b"\0")

    put(_generator_fingerprint(), eq.model.name, *flags, "fold", fold, "sizes", *sizes)
    if jacobian:   # (the derivatives follow from the equations hashed below)
        put("jacobian")
    if fold:
        put(sorted(eq.model.parameter_values.items()))
    put("states", *eq.coordinates, *eq.speeds, "parameters", *eq.parameters)
    stored = source_key(eq)
    if stored is not None:   # equations stored by their model's text (kidym.eom.stored):
        put("stored", stored)   # that text's hash names every quantity below
    else:
        for s, f in eq.intermediates(roots):
            put(s, f)
    put("roots", *roots, "outputs", *outputs, "events", *map(repr, events))
    return h.hexdigest()[:32]


def _entry(key: str) -> Path:
    return cache_dir() / "index" / f"{key}.json"


def lookup(key: str) -> tuple[CCode, Path] | None:
    """The code and the whole library of ``key``, or ``None`` (not cached, or damaged)."""
    try:
        doc = json.loads(_entry(key).read_text(encoding="utf-8"))
        library = cache_dir() / doc["library"]
        if cached_library(library) is None:
            return None
        fields = doc["code"]
        fields["counts"] = {k: OpCount(**v) for k, v in fields["counts"].items()}
        fields["mf_counts"] = OpCount(**fields["mf_counts"])
        for name in ("state_names", "parameter_names", "output_names", "event_names",
                     "event_directions", "event_actions"):
            fields[name] = tuple(fields[name])
        sources = [library.with_suffix(".c" if k == 0 else f".part{k - 1}.c")
                   for k in range(fields.pop("n_sources"))]
        fields["source"] = sources[0].read_text(encoding="utf-8")
        fields["parts"] = tuple(p.read_text(encoding="utf-8") for p in sources[1:])
        return CCode(**fields), library
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(key: str, code: CCode, library: Path) -> None:
    """Record that ``key`` is built as ``library`` (atomically; best effort)."""
    fields = {f.name: getattr(code, f.name) for f in dataclasses.fields(code)
              if f.name not in ("source", "parts")}
    fields["counts"] = {k: dataclasses.asdict(v) for k, v in code.counts.items()}
    fields["mf_counts"] = dataclasses.asdict(code.mf_counts)
    fields["n_sources"] = len(code.sources)
    entry = _entry(key)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".index-", dir=entry.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"library": library.name, "code": fields}, f)
        os.replace(tmp, entry)
    except OSError:
        pass  # the index only saves time; the library itself is cached anyway
