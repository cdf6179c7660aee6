"""The KiDyM model language: text → validated, immutable :class:`~kidym.model.Model`.

``parse(text)`` and ``load(path)`` are the entry points; both raise
:class:`~kidym.errors.ParseError` (the text is not valid language) or
:class:`~kidym.errors.ModelError` (it is, but does not describe a valid model),
each carrying every diagnostic of the file.

Modules: :mod:`~kidym.lang.source` (encodings, comments, statements, locations),
``grammar.lark`` and :mod:`~kidym.lang.parser` (syntax), :mod:`~kidym.lang.ast`
(the located syntax tree), :mod:`~kidym.lang.formulas` (formula → SymEngine) and
:mod:`~kidym.lang.keywords` (instruction names in every spelling). The meaning of
the statements is given by :mod:`kidym.model.build`.
"""

from kidym.lang.parser import load, load_tasks, parse, parse_tasks

__all__ = ["load", "load_tasks", "parse", "parse_tasks"]
