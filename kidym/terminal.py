"""What reaches a terminal: model text shown with its control characters escaped.

A model file is data, and so is what kidym prints of it (names, titles, source lines
in error messages). A control character (an escape sequence can move the cursor,
retitle the window or rewrite what was printed) or a bidirectional override (it
reorders what the reader sees) is shown as ``\\x1b``/``\\u202e`` instead of being sent.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from typing import TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                      r"\u2060-\u2069\ufeff]")


def escape(text: str, *, keep: str = "\n\t") -> str:
    """``text`` with control and format characters other than ``keep`` escaped.

    Characters of categories Cc and Cf (and the line/paragraph separators) become
    ``\\xNN`` or ``\\uNNNN``; ``keep`` (default newline and tab) pass unchanged.
    """

    def one(m: re.Match[str]) -> str:
        ch = m.group(0)
        if ch in keep:
            return ch
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"

    out = _CONTROL.sub(one, text)
    if any(unicodedata.category(c) == "Cf" for c in out if ord(c) > 0x7f):
        out = "".join(c if unicodedata.category(c) != "Cf" else f"\\u{ord(c):04x}"
                      for c in out)
    return out


def placeholder(text: str) -> str:
    """``text`` with each control or format character replaced by one ``�``.

    For a source line echoed above a caret: one character for one, so the caret
    still points at the right column.
    """
    out = _CONTROL.sub("\ufffd", text.replace("\t", " "))
    return "".join("\ufffd" if unicodedata.category(c) == "Cf" else c for c in out)


class EscapingStream:
    """A text stream that escapes what :func:`escape` escapes before writing it.

    ``keep`` names the control characters kidym itself writes on purpose (newline,
    tab; carriage return for the progress bars on standard error).
    """

    def __init__(self, stream: TextIO, keep: str = "\n\t") -> None:
        self._stream = stream
        self._keep = keep

    def write(self, text: str) -> int:
        return self._stream.write(escape(text, keep=self._keep))

    def __getattr__(self, name: str):  # flush, isatty, fileno, encoding …
        return getattr(self._stream, name)


def install() -> None:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`EscapingStream`."""
    if not isinstance(sys.stdout, EscapingStream):
        sys.stdout = EscapingStream(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, EscapingStream):
        sys.stderr = EscapingStream(sys.stderr, keep="\n\t\r")  # type: ignore[assignment]
