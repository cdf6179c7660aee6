"""Suite-wide markers.

``compiled``: a test that builds and runs generated C — every test whose id names the
compiled engine (``[compiled]``, ``test_compiled…``), the code-generation tests, and
the executed docs blocks that compile (``tests/test_docs_executed.py``). ``.ci/run``
runs these a second time with the C built another way (``KIDYM_CFLAGS``), which
checks that no test depends on how one build rounds.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if "compiled" in item.nodeid.split("::", 1)[-1] or "compiled" in path or \
                path.startswith("tests/codegen/"):
            item.add_marker(pytest.mark.compiled)
