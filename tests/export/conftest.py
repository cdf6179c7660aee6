"""The session's library cache for the export tests (the compiled engine is the oracle)."""

from tests.codegen.shared import kidym_cache  # noqa: F401
