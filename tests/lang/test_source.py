"""Comments, statement splitting, locations and file encodings."""

from __future__ import annotations

import pytest

from kidym.errors import ParseError
from kidym.lang import load, parse
from kidym.lang.source import LineIndex, decode, split_statements, strip_comments

RUSSIAN_MODEL = """\
РАБОТА:=№1/1 - маятник;
{ Маятник: стержень на шарнире }
масса = 2; длина = 0.5;
Стержень | Rz(угол) | Sx(длина/2), m(масса), Jz(масса*длина^2/12);
ГРАВИТАЦИЯ := 0, -g, 0;
НАЧАЛЬНЫЕ УСЛОВИЯ := угол(0.1);
ПОКАЗАТЬ := угол;
РАСЧЕТ := ДИНАМИКА;
КОНЕЦ;
"""


def _strip(text: str) -> tuple[str, list]:
    return strip_comments(text, LineIndex(text))


def test_hash_comments_span_lines_and_keep_positions() -> None:
    text = "x = 1; # a\ncomment # y = 2;"
    clean, diags = _strip(text)
    assert diags == []
    assert len(clean) == len(text)
    assert clean.count("\n") == 1
    assert clean.split() == ["x", "=", "1;", "y", "=", "2;"]
    assert clean.index("y") == text.index("y")


def test_brace_comments_nest() -> None:
    clean, diags = _strip("a {one {two} still one} b")
    assert diags == []
    assert clean.split() == ["a", "b"]


def test_hash_inside_braces_is_part_of_the_comment() -> None:
    clean, diags = _strip("a { # } b")
    assert diags == []
    assert clean.split() == ["a", "b"]


def test_comment_inside_a_statement() -> None:
    model = parse("m = 1 + # one more # 2; Jm.x = m { inertia } ;")
    assert model.parameter_values["m"] == 3.0


@pytest.mark.parametrize(("text", "line", "column", "match"), [
    ("x = 1;\n  { open {nested} ", 2, 3, "unterminated comment: `{`"),
    ("x = 1;  # never closed\n y = 2;", 1, 9, "unterminated comment: `#`"),
    ("x = 1; } y = 2;", 1, 8, "`}` without an opening `{`"),
])
def test_comment_errors_are_located(text: str, line: int, column: int, match: str) -> None:
    _clean, diags = _strip(text)
    assert len(diags) == 1
    assert diags[0].span.line == line
    assert diags[0].span.column == column
    assert match in diags[0].message
    with pytest.raises(ParseError, match=r"unterminated comment|without an opening"):
        parse(text)


def test_statements_split_at_semicolons_with_offsets() -> None:
    clean = "a = 1;\n\n  b = 2 ;;  c"
    chunks = split_statements(clean)
    assert [c.text.strip() for c in chunks] == ["a = 1", "b = 2", "c"]
    assert [c.terminated for c in chunks] == [True, True, False]
    assert clean[chunks[1].end] == ";"
    assert clean[chunks[1].start:chunks[1].end] == chunks[1].text


def test_line_index_counts_like_splitlines() -> None:
    text = "ab\r\ncd\ref\n"
    index = LineIndex(text)
    assert index.position(0) == (1, 1)
    assert index.position(text.index("c")) == (2, 1)
    assert index.position(text.index("f")) == (3, 2)
    assert index.position(len(text)) == (4, 1)
    assert len(text.splitlines()) == 3
    span = index.span(text.index("a"), text.index("d") + 1)  # runs onto line 2
    assert (span.line, span.column, span.end_column) == (1, 1, 3)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1251", "cp866"])
def test_decode_detects_the_encoding(encoding: str) -> None:
    data = RUSSIAN_MODEL.encode(encoding)
    text, found = decode(data)
    assert text == RUSSIAN_MODEL
    assert found == encoding


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1251", "cp866"])
def test_load_reads_any_supported_encoding(tmp_path, encoding: str) -> None:
    path = tmp_path / f"маятник_{encoding}.kdm"
    path.write_bytes(RUSSIAN_MODEL.encode(encoding))
    warnings: list = []
    model = load(path, warnings=warnings)
    assert model.name == f"маятник_{encoding}"
    assert model.filename == str(path)
    assert model.coordinates == ("угол",)
    assert model.parameter_values["масса"] == 2.0
    assert model.initial == {"угол": 0.1}
    assert model.outputs == ("угол",)
    assert model.calculation == "DYNAMICS"
    assert model.bodies[0].name == "Стержень"
    assert model.title == "№1/1 - маятник"


def test_parse_accepts_a_leading_bom() -> None:
    model = parse("\ufeffm = 1; Jm.x = m;")
    assert model.coordinates == ("x",)


def test_load_errors_name_the_file(tmp_path) -> None:
    path = tmp_path / "bad.kdm"
    path.write_text("m = 1;\nJm.x = (m;\n", encoding="cp1251")
    with pytest.raises(ParseError) as info:
        load(path)
    assert info.value.render().startswith(f"{path}:2:10: error:")


def test_crlf_line_endings_keep_locations() -> None:
    with pytest.raises(ParseError) as info:
        parse("m = 1;\r\n{ note }\r\nJm.x = (m;\r\n")
    [d] = info.value.errors
    assert (d.span.line, d.span.column) == (3, 10)
    assert info.value.render().splitlines()[1] == "    Jm.x = (m;"
