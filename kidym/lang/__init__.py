"""The KiDyM model language: text → validated, immutable :class:`~kidym.model.Model`.

``parse(text)`` and ``load(path)`` (:mod:`~kidym.lang.files`) are the entry points; both raise
:class:`~kidym.errors.ParseError` (the text is not valid language) or
:class:`~kidym.errors.ModelError` (it is, but does not describe a valid model),
each carrying every diagnostic of the file.

Modules: :mod:`~kidym.lang.source` (encodings, comments, statements, locations),
``grammar.lark`` and :mod:`~kidym.lang.parser` (syntax), :mod:`~kidym.lang.ast`
(the located syntax tree), :mod:`~kidym.lang.formulas` (formula → SymEngine) and
:mod:`~kidym.lang.keywords` (instruction names in every spelling). The meaning of
the statements is given by :mod:`kidym.model.build`.
"""

from kidym.lang.files import load, load_tasks

__all__ = ["load", "load_tasks", "parse", "parse_tasks"]


def __getattr__(name: str):
    """``parse`` and ``parse_tasks`` on first use (PEP 562): a model file read back from
    the cache (:mod:`kidym.lang.files`) imports no parser."""
    if name in ("parse", "parse_tasks"):
        from kidym.lang import parser

        return getattr(parser, name)
    raise AttributeError(f"module 'kidym.lang' has no attribute {name!r}")
