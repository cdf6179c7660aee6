"""Equations stored in the cache, by the text of the model file they come from.

A cached start of a big model (the 60-link chain) spent most of its time deriving the
equations again (seconds) and hashing them for the compiled library's cache key
(tenths of a second). :func:`derived` stores the equations of a model read from a
file (:func:`kidym.lang.load_tasks` remembers the very model objects it made, with a
hash of the file's bytes, its path and kidym's own source,
:func:`kidym.cache.source_key`) and reads them back in a later process: a pickle,
authenticated by an HMAC under the cache's secret like the compiled libraries
(:func:`kidym.cache.read_stored`). The equations read back, or stored, are remembered
under that key, and :func:`kidym.codegen.index.equations_key` hashes the key instead
of every named quantity.

Invalidation: the key is a hash of the file's bytes (one character changed in a
parameter's formula is another key), its path, the options of :func:`derive`, and
kidym's source and the Python and SymEngine versions
(:func:`kidym.cache.code_fingerprint`). A model made by the Python API, or changed
after reading (``dataclasses.replace`` makes a new object), has no key and is derived.
"""

from __future__ import annotations

import hashlib

from kidym.cache import read_stored, remember_source, source_key, stored_as_read
from kidym.eom.equations import Equations, derive
from kidym.model.model import Model


def derived(model: Model, **options: str) -> Equations:
    """:func:`kidym.eom.equations.derive` of ``model``, stored in the cache by the text
    the model was read from.

    Parameters
    ----------
    model : Model
        A validated model; one read by :func:`kidym.lang.load_tasks` (or
        :func:`kidym.load`) is stored, any other is only derived.
    **options
        The keyword options of :func:`kidym.eom.equations.derive`, part of the key.

    Returns
    -------
    Equations
        Equal to ``derive(model, **options)``; its ``model`` is an equal copy of
        ``model`` where it was read back from the cache.
    """
    source = source_key(model)
    if source is None:
        return derive(model, **options)
    key = hashlib.sha256(repr((source, sorted(options.items()))).encode()).hexdigest()
    eq = read_stored("equations", key)
    if not isinstance(eq, Equations) or eq.model.name != model.name:
        # (the first run goes on with the copy the later ones read: the same C)
        eq = stored_as_read("equations", key, derive(model, **options))
    remember_source(eq, key)
    return eq
