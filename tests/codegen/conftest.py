"""The session's library cache for the code-generation tests."""

from tests.codegen.shared import kidym_cache  # noqa: F401
