"""Every ```kdm block of docs/language.md is a model kidym accepts (all its tasks)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kidym.lang import parse_tasks
from kidym.lang.fmt import format_source

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"
BLOCKS = re.findall(r"```kdm\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_reference_has_examples() -> None:
    assert len(BLOCKS) >= 20


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_block_parses_and_formats(block: str) -> None:
    models = parse_tasks(block)
    assert models
    assert len(parse_tasks(format_source(block, language="en"))) == len(models)
