"""Every ```kdm block of the documentation is a model kidym accepts (all its tasks).

The blocks are found by ``tests/docblocks.py`` (README.md, docs/*.md, examples/*/README.md);
most are in docs/language.md, which promises that each of its blocks parses.
"""

from __future__ import annotations

import pytest

from kidym.lang import parse_tasks
from kidym.lang.fmt import format_source
from tests.docblocks import all_blocks

BLOCKS = [b for b in all_blocks() if b.kind == "kdm"]


def test_the_reference_has_examples() -> None:
    assert sum(b.page.name == "language.md" for b in BLOCKS) >= 20


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_doc_block_parses_and_formats(block) -> None:
    models = parse_tasks(block.text)
    assert models
    assert len(parse_tasks(format_source(block.text, language="en"))) == len(models)
