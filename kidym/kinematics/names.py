"""Names of the quantities generated for each body (seed 000, 2025 spelling).

``S11Body … S33Body``   rotation matrix fixed ← body (columns: body axes in the fixed frame)
``XOBody YOBody ZOBody`` origin of the body frame in the fixed frame
``XCBody YCBody ZCBody`` centre of mass in the fixed frame
``ωXBody ωYBody ωZBody`` angular velocity, projections on the body's central axes

The original KiDyM spellings (``S11@Body``, ``XC@Body``, ``omegax@Body``) and the
Cyrillic ``Х``/``У`` the 2025 paper typesets in ``ωХКуля``/``ωУКуля`` are aliases.
"""

from __future__ import annotations

from collections.abc import Iterable

ROTATION = tuple(f"S{i}{j}" for i in (1, 2, 3) for j in (1, 2, 3))
ORIGIN = ("XO", "YO", "ZO")
CENTRE = ("XC", "YC", "ZC")
OMEGA = ("ωX", "ωY", "ωZ")
#: Prefix of the multiplier outputs: ``λf1`` is the multiplier of constraint ``f1``
#: (a generated name the model reserves, so it is defined below the model builder).
MULTIPLIER_PREFIX = "λ"

_OLD_OMEGA = ("omegax", "omegay", "omegaz")
_CYRILLIC_OMEGA = {"ωХ": "ωX", "ωУ": "ωY"}  # U+0425, U+0423 as printed in seed 000


def generated_names(body: str) -> list[str]:
    """All canonical generated names of ``body``, in a fixed order."""
    return [p + body for p in ROTATION + ORIGIN + CENTRE + OMEGA]


def aliases(body: str) -> dict[str, str]:
    """Map every accepted alias of a generated name of ``body`` to its canonical name."""
    out: dict[str, str] = {}
    for prefix in ROTATION + ORIGIN + CENTRE:
        out[f"{prefix}@{body}"] = prefix + body
    for old, new in zip(_OLD_OMEGA, OMEGA):
        out[f"{old}@{body}"] = new + body
    for cyr, lat in _CYRILLIC_OMEGA.items():
        out[cyr + body] = lat + body
    return out


def canonical(name: str, bodies: Iterable[str]) -> str:
    """``name`` with an alias of a generated name of one of ``bodies`` made canonical.

    Time derivatives are kept: ``omegax@Ball't`` → ``ωXBall't``; any other name is
    returned as it is.
    """
    base, suffix = name, ""
    while base.endswith("'t") and len(base) > 2:
        base, suffix = base[:-2], suffix + "'t"
    for body in bodies:
        table = aliases(body)
        if base in table:
            return table[base] + suffix
    return name
