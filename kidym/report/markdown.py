"""Model text in Markdown: shown literally, never obeyed.

``report.md`` holds the model's name (a file's stem), its file name, units and source.
Rendered (GitHub, an editor's preview, pandoc), Markdown passes raw HTML through, so
each piece of model text is written in a form that stays text: escaped characters in
headings and table cells, code spans and fenced blocks longer than any run of
backticks inside them, control characters written ``\\x1b``
(:func:`kidym.terminal.escape`).
"""

from __future__ import annotations

import re

from kidym.terminal import escape

#: characters with a meaning in Markdown text, escaped with a backslash
_MD_SPECIAL = "\\`*_{}[]()<>#+-.!|~"


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown: every character with a meaning escaped, line breaks
    as spaces, control characters written ``\\x1b`` (a model's name may hold any
    character: ``*my_model*`` stays that)."""
    return "".join("\\" + c if c in _MD_SPECIAL else c
                   for c in escape(" ".join(str(text).splitlines())))


#: characters of a table cell that would be markup: HTML as entities, the rest escaped
_MD_CELL = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\\": "\\\\", "`": "\\`",
            "[": "\\[", "]": "\\]", "*": "\\*", "_": "\\_"}


def markdown_cell(text) -> str:
    """``text`` as the literal content of a Markdown table cell: no HTML, no link, no
    code span or emphasis of the model's text (a unit ``<img src=x onerror=…>`` stays
    those characters), line breaks as spaces, control characters written ``\\x1b``;
    numbers and plain words unchanged."""
    return "".join(_MD_CELL.get(c, c) for c in escape(" ".join(str(text).splitlines())))


def markdown_block(text: str) -> list[str]:
    """``text`` as the lines of a fenced Markdown code block whose fence is longer than
    any run of backticks in it (a comment holding a fence cannot close the block and
    make what follows live HTML); control characters written ``\\x1b``."""
    text = escape(text, keep="\n\t")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text.removesuffix("\n"), fence]


def markdown_code(text: str) -> str:
    """``text`` as a Markdown code span, fenced by more backticks than it holds."""
    text = escape(" ".join(str(text).splitlines()))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
