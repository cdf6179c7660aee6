"""Model source text: decoding, comment removal, statement splitting, locations.

The parser works on the *comment-free* text: every comment is replaced by spaces
(line breaks kept), so an offset into it is an offset into the original text and
line/column numbers stay true. Statements are then split at every `;` and parsed
one by one, so that one bad statement does not hide the errors of the others.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from kidym.errors import Diagnostic, Span

#: Characters that :meth:`str.splitlines` treats as line boundaries; they are kept
#: when comments are blanked so that line numbers agree with ``Diagnostic.format``.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")

#: Cyrillic letters counted when guessing a legacy 8-bit encoding.
_CYRILLIC = frozenset(chr(c) for c in range(0x0410, 0x0450)) | frozenset("ЁёІіЇїЄєҐґ")


class LineIndex:
    """Maps offsets of a text to 1-based (line, column) the way ``splitlines`` counts lines.

    Parameters
    ----------
    text : str
        The whole source.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] = [0]
        self._ends: list[int] = []
        pos = 0
        breaks = "".join(LINE_BREAKS)
        for line in text.splitlines(keepends=True):
            content = len(line.rstrip(breaks))
            self._ends.append(pos + content)
            pos += len(line)
            if content < len(line):
                self._starts.append(pos)
        if len(self._ends) < len(self._starts):
            self._ends.append(len(text))

    def position(self, offset: int) -> tuple[int, int]:
        """Line and column (1-based) of ``offset``."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1

    def span(self, start: int, end: int | None = None) -> Span:
        """The :class:`Span` from ``start`` to ``end`` (exclusive offsets).

        When ``end`` lies on a later line the span runs to the end of the first line.
        """
        line, column = self.position(start)
        if end is None or end <= start:
            return Span(line, column, column + 1)
        end_line, end_column = self.position(end)
        if end_line != line:
            end_column = self._ends[line - 1] - self._starts[line - 1] + 1
            end_column = max(end_column, column + 1)
        return Span(line, column, end_column)


@dataclass(frozen=True)
class Chunk:
    """One statement of the comment-free text.

    Attributes
    ----------
    text : str
        The statement without its `;`.
    start, end : int
        Offsets of the statement in the source (``end`` is where its `;` is).
    terminated : bool
        Whether a `;` ends it (only the last statement of a file may lack one).
    """

    text: str
    start: int
    end: int
    terminated: bool


def _blank(text: str) -> str:
    return "".join(c if c in LINE_BREAKS else " " for c in text)


def strip_comments(text: str, index: LineIndex,
                   spans: list[tuple[int, int]] | None = None) -> tuple[str, list[Diagnostic]]:
    """Replace every comment by spaces, keeping line breaks.

    ``# … #`` comments end at the next `#`; ``{ … }`` comments nest. An unterminated
    comment is an error located at its start (the rest of the text is then treated
    as comment); a `}` without a `{` is an error too.

    If ``spans`` is given, the ``(start, end)`` offsets of every comment are
    appended to it (for the formatter).

    Returns
    -------
    clean : str
        The text of the same length with the comments blanked.
    diagnostics : list of Diagnostic
    """
    out: list[str] = []
    diags: list[Diagnostic] = []
    i, n = 0, len(text)
    plain_from = 0
    while i < n:
        c = text[i]
        if c not in "#{}":
            i += 1
            continue
        out.append(text[plain_from:i])
        if c == "#":
            j = text.find("#", i + 1)
            if j < 0:
                diags.append(Diagnostic(
                    "unterminated comment: `#` opens a comment that no `#` closes; "
                    "add the closing `#`", index.span(i)))
                j = n - 1
        elif c == "{":
            depth, j = 0, i
            while j < n:
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                diags.append(Diagnostic(
                    "unterminated comment: `{` opens a comment that no `}` closes "
                    "(`{ … }` comments nest); add the closing `}`", index.span(i)))
                j = n - 1
        else:
            diags.append(Diagnostic(
                "`}` without an opening `{`; remove it or open the comment with `{`",
                index.span(i)))
            out.append(" ")
            i += 1
            plain_from = i
            continue
        # a comment text[i..j]: blanked (lines and columns kept), its span recorded
        out.append(_blank(text[i:j + 1]))
        if spans is not None:
            spans.append((i, j + 1))
        i = plain_from = j + 1
    out.append(text[plain_from:])
    return "".join(out), diags


def split_statements(clean: str) -> list[Chunk]:
    """Split comment-free text into statements at every `;`; blank statements are dropped."""
    chunks: list[Chunk] = []
    start = 0
    while True:
        semi = clean.find(";", start)
        if semi < 0:
            tail = clean[start:]
            if tail.strip():
                chunks.append(Chunk(tail, start, len(clean), False))
            return chunks
        body = clean[start:semi]
        if body.strip():
            chunks.append(Chunk(body, start, semi, True))
        start = semi + 1


def _cyrillic_count(text: str) -> int:
    return sum(1 for c in text if c in _CYRILLIC)


def decode(data: bytes) -> tuple[str, str]:
    """Decode a model file: UTF-8 (with or without BOM), else CP1251 or CP866.

    UTF-8 is tried strictly first. Otherwise both legacy Cyrillic code pages are
    decoded and the one that yields more Cyrillic letters wins (CP1251 on a tie).

    Returns
    -------
    text : str
    encoding : {"utf-8-sig", "utf-8", "cp1251", "cp866"}
    """
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            return data[3:].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError:
            pass
    else:
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    as_1251 = data.decode("cp1251", errors="replace")
    as_866 = data.decode("cp866", errors="replace")
    if _cyrillic_count(as_866) > _cyrillic_count(as_1251):
        return as_866, "cp866"
    return as_1251, "cp1251"
