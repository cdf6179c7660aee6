"""Instruction names in Russian, Ukrainian and English."""

from __future__ import annotations

import pytest

from kidym.lang import keywords


@pytest.mark.parametrize(("spelling", "key"), [
    ("ОБОБЩЕННЫЕ КООРДИНАТЫ", "COORDINATES"), ("УЗАГАЛЬНЕНІ КООРДИНАТИ", "COORDINATES"),
    ("COORDINATES", "COORDINATES"),
    ("ПСЕВДОСКОРОСТИ", "PSEUDOVELOCITIES"), ("КВАЗИСКОРОСТИ", "PSEUDOVELOCITIES"),
    ("ПСЕВДОШВИДКОСТІ", "PSEUDOVELOCITIES"), ("PSEUDOVELOCITIES", "PSEUDOVELOCITIES"),
    ("НАЧАЛЬНЫЕ УСЛОВИЯ", "INITIAL"), ("ПОЧАТКОВІ УМОВИ", "INITIAL"), ("INITIAL", "INITIAL"),
    ("ВРЕМЯ", "TIME"), ("ЧАС", "TIME"), ("TIME", "TIME"),
    ("ВАРЬИРОВАТЬ", "VARY"), ("ВАРІЮВАТИ", "VARY"), ("VARY", "VARY"),
    ("ПОКАЗАТЬ", "SHOW"), ("ПЕЧАТАТЬ", "SHOW"), ("ПОКАЗАТИ", "SHOW"), ("SHOW", "SHOW"),
    ("ГРАВИТАЦИЯ", "GRAVITY"), ("ГРАВІТАЦІЯ", "GRAVITY"), ("GRAVITY", "GRAVITY"),
    ("РАСЧЕТ", "CALCULATION"), ("РАСЧЁТ", "CALCULATION"), ("РОЗРАХУНОК", "CALCULATION"),
    ("CALCULATION", "CALCULATION"),
    ("КОНЕЦ", "END"), ("КІНЕЦЬ", "END"), ("END", "END"),
    ("РАБОТА", "TASK"), ("РОБОТА", "TASK"), ("TASK", "TASK"),
    ("ВЫПОЛНИЛ", "AUTHOR"), ("ВЫПОЛНИЛА", "AUTHOR"), ("ВИКОНАВ", "AUTHOR"),
    ("КВАТЕРНИОН", "QUATERNION"), ("КВАТЕРНІОН", "QUATERNION"), ("QUATERNION", "QUATERNION"),
    ("ТВЕРДЫЕ ТЕЛА", "BODIES"), ("ТВЁРДЫЕ ТЕЛА", "BODIES"), ("РАЗМЕРНОСТИ", "UNITS"),
])
def test_every_spelling_maps_to_its_key(spelling: str, key: str) -> None:
    assert keywords.lookup(spelling) == key


def test_lookup_ignores_case_spacing_and_yo() -> None:
    assert keywords.lookup("обобщенные   координаты") == "COORDINATES"
    assert keywords.lookup("Начальные\nусловия") == "INITIAL"
    assert keywords.lookup("расчёт") == "CALCULATION"
    assert keywords.lookup("show") == "SHOW"
    assert keywords.lookup("ПОКАЗАТ") is None


def test_closest_suggests_a_spelling() -> None:
    assert keywords.closest("ПОКАЗАТ") == "ПОКАЗАТЬ"
    assert keywords.closest("ГРАВИТАЦИ") == "ГРАВИТАЦИЯ"
    assert keywords.closest("coordinats") == "COORDINATES"
    assert keywords.closest("qwertyuiop") is None
    # one misspelt word of a multi-word keyword
    assert keywords.closest("КАРДИНАТЫ") == "ОБОБЩЕННЫЕ КООРДИНАТЫ"
    assert keywords.closest("УСЛОВИЯ") == "НАЧАЛЬНЫЕ УСЛОВИЯ"


@pytest.mark.parametrize(("value", "key"), [
    ("ДИНАМИКА", "DYNAMICS"), ("ДИНАМІКА", "DYNAMICS"), ("КИНЕМАТИКА", "KINEMATICS"),
    ("КІНЕМАТИКА", "KINEMATICS"), ("ПЕЧАТЬ УРАВНЕНИЙ", "EQUATIONS"),
    ("печать  уравнений", "EQUATIONS"), ("ДРУК РІВНЯНЬ", "EQUATIONS"),
])
def test_calculation_values(value: str, key: str) -> None:
    assert keywords.lookup_calculation(value) == key


def test_spellings_are_unambiguous() -> None:
    seen: dict[str, str] = {}
    for key, spellings in keywords.KEYWORDS.items():
        for s in spellings:
            norm = keywords.normalize(s)
            assert seen.setdefault(norm, key) == key, f"{s} is both {seen[norm]} and {key}"
