"""Keywords renamed in the public API, accepted under their old name for one release.

One word for one thing: ``parameters=`` for parameter overrides everywhere (it was
``params=`` in the analyses), ``state=`` for an operating point (``equilibrium`` took
``initial=``). A call with the old name works and warns (``DeprecationWarning``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def renamed_keyword(old: str, new: str, *, removed_in: str = "0.2") -> Callable[[F], F]:
    """Accept ``old=`` as ``new=`` with a :class:`DeprecationWarning`; both is a
    ``TypeError``."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{function.__name__}() got both {old}= and {new}= "
                                    f"(the same thing: {old}= is the old name)")
                warnings.warn(f"{function.__name__}({old}=…) is deprecated and will be "
                              f"removed in kidym {removed_in}: use {new}=…",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
