"""Instruction names and calculation types of the KiDyM language, in every spelling.

Instruction names are case-insensitive sequences of words; Russian (the original
KiDyM), Ukrainian (the 2025 paper) and English spellings are accepted, and `Ё` is
the same letter as `Е`. Each instruction has one canonical English key; the parser
and the model builder only ever see keys.

Examples
--------
>>> lookup("Обобщенные   координаты")
'COORDINATES'
>>> lookup("РАСЧЁТ")
'CALCULATION'
>>> closest("ПОКАЗАТ")
'ПОКАЗАТЬ'
"""

from __future__ import annotations

import difflib
import re

#: Canonical key → accepted spellings (the first one is shown in messages).
KEYWORDS: dict[str, tuple[str, ...]] = {
    # -- implemented -----------------------------------------------------------
    "COORDINATES": ("ОБОБЩЕННЫЕ КООРДИНАТЫ", "УЗАГАЛЬНЕНІ КООРДИНАТИ", "COORDINATES",
                    "GENERALIZED COORDINATES"),
    "PSEUDOVELOCITIES": ("ПСЕВДОСКОРОСТИ", "КВАЗИСКОРОСТИ", "ПСЕВДОШВИДКОСТІ",
                         "КВАЗІШВИДКОСТІ", "PSEUDOVELOCITIES", "QUASIVELOCITIES"),
    "INITIAL": ("НАЧАЛЬНЫЕ УСЛОВИЯ", "ПОЧАТКОВІ УМОВИ", "INITIAL", "INITIAL CONDITIONS"),
    "TIME": ("ВРЕМЯ", "ЧАС", "TIME"),
    "VARY": ("ВАРЬИРОВАТЬ", "ВАРІЮВАТИ", "VARY"),
    "SHOW": ("ПОКАЗАТЬ", "ПЕЧАТАТЬ", "ПОКАЗАТИ", "ДРУКУВАТИ", "SHOW"),
    "GRAVITY": ("ГРАВИТАЦИЯ", "ГРАВІТАЦІЯ", "GRAVITY"),
    "CALCULATION": ("РАСЧЕТ", "РАСЧЁТ", "РОЗРАХУНОК", "CALCULATION"),
    "END": ("КОНЕЦ", "КІНЕЦЬ", "END"),
    "ANGULAR_VELOCITY": ("УГЛОВАЯ СКОРОСТЬ", "КУТОВА ШВИДКІСТЬ", "ANGULAR VELOCITY"),
    "ROLLING": ("КАЧЕНИЕ", "КОЧЕННЯ", "ROLLING"),
    # loop closure: a point of one body coincides with a point of another (or the ground)
    "COINCIDE": ("СОВПАДЕНИЕ", "СОВПАДЕНИЯ", "ЗБІГ", "ЗБІГИ", "COINCIDE", "COINCIDENCE"),
    # virtual-potential constraints of seed 001: `f = 0` (5) and surfaces `f > 0` (7)
    "VIRTUAL_CONSTRAINTS": ("ВИРТУАЛЬНЫЕ СВЯЗИ", "ВІРТУАЛЬНІ В'ЯЗІ", "VIRTUAL CONSTRAINTS"),
    "BOUNDING_SURFACES": ("ОГРАНИЧИВАЮЩИЕ ПОВЕРХНОСТИ", "ОБМЕЖУЮЧІ ПОВЕРХНІ",
                          "BOUNDING SURFACES"),
    # hybrid motion (seed 002): zero crossings with a stop or a reset of states
    "EVENTS": ("СОБЫТИЯ", "СОБЫТИЕ", "ПОДІЇ", "ПОДІЯ", "EVENTS", "EVENT"),
    # surfaces drawn by the 3-D viewer (display only, kidym.model.scene)
    "SCENE": ("СЦЕНА", "ОТОЧЕННЯ", "SCENE"),
    # solids the 3-D viewer draws for bodies (display only, kidym.model.display)
    "SHAPES": ("ФОРМЫ", "ФОРМИ", "SHAPES"),
    # initial values that the consistent start on constraints may change (kidym.model.free)
    "FREE": ("СВОБОДНЫЕ", "ВІЛЬНІ", "FREE"),
    # programmed constraints held by controls (seed 004 (5.1)-(5.6)), the controls
    # themselves are the `НЕИЗВЕСТНЫЕ`
    "PROGRAMMED_CONSTRAINTS": ("ПРОГРАММНЫЕ СВЯЗИ", "ПРОГРАМНІ В'ЯЗІ",
                               "PROGRAMMED CONSTRAINTS"),
    # -- recognised, not implemented yet (a warning; the statement is ignored) -----
    "TASK": ("РАБОТА", "РОБОТА", "TASK"),
    "AUTHOR": ("ВЫПОЛНИЛ", "ВЫПОЛНИЛА", "ВЫПОЛНИЛИ", "ВИКОНАВ", "ВИКОНАЛА", "ВИКОНАЛИ",
               "AUTHOR"),
    "VARIANT": ("ВАРИАНТ", "ВАРІАНТ", "VARIANT"),
    "QUATERNION": ("КВАТЕРНИОН", "КВАТЕРНІОН", "QUATERNION"),
    "BODIES": ("ТВЕРДЫЕ ТЕЛА", "ТВЁРДЫЕ ТЕЛА", "ТВЕРДОЕ ТЕЛО", "ТВЁРДОЕ ТЕЛО", "ТВЕРДІ ТІЛА",
               "ТВЕРДЕ ТІЛО", "BODIES"),
    "UNITS": ("РАЗМЕРНОСТИ", "ЕДИНИЦЫ ИЗМЕРЕНИЯ", "РОЗМІРНОСТІ", "ОДИНИЦІ ВИМІРЮВАННЯ",
              "UNITS"),
    "CODING": ("КОДИРОВКА", "КОДУВАННЯ", "CODING"),
    "RANGE": ("ДИАПАЗОН", "ДИАПАЗОНЫ", "ДІАПАЗОН", "ДІАПАЗОНИ", "RANGE"),
    "COMPARE": ("СРАВНИТЬ", "ПОРІВНЯТИ", "COMPARE"),
    "COMBINE": ("СОВМЕСТИТЬ", "СУМІСТИТИ", "COMBINE"),
    "ANIMATION": ("АНИМАЦИЯ", "АНИМАЦИЯ3D", "АНІМАЦІЯ", "АНІМАЦІЯ3D", "ANIMATION",
                  "ANIMATION3D"),
    "BACKGROUND": ("ФОН", "ФОН3D", "BACKGROUND", "BACKGROUND3D"),
    "PICTURES": ("РИСУНОК", "РИСУНКИ", "МАЛЮНОК", "МАЛЮНКИ", "PICTURES"),
    "UNKNOWNS": ("НЕИЗВЕСТНЫЕ", "НЕВІДОМІ", "UNKNOWNS"),
    "INPUTS": ("ВХОДЫ", "ВХОДИ", "INPUTS"),
    "NEW_VALUES": ("НОВЫЕ ЗНАЧЕНИЯ", "НОВІ ЗНАЧЕННЯ", "NEW VALUES"),
    "WITHDRAW": ("ИЗЪЯТЬ", "ИЗЬЯТЬ", "ВИЛУЧИТИ", "WITHDRAW"),
    "IK_EQUATIONS": ("УРАВНЕНИЯ", "УРАВНЕНИЕ", "РІВНЯННЯ", "EQUATIONS"),
    "INITIAL_GUESS": ("НАЧАЛЬНОЕ ПОЛОЖЕНИЕ", "НАЧАЛЬНОЕ ПРИБЛИЖЕНИЕ", "ПОЧАТКОВЕ ПОЛОЖЕННЯ",
                      "ПОЧАТКОВЕ НАБЛИЖЕННЯ", "INITIAL GUESS"),
    "LIMITS": ("ОГРАНИЧЕНИЯ", "ОБМЕЖЕННЯ", "LIMITS"),
    "ANGLES": ("УГЛЫ", "ВСЕ УГЛЫ", "КУТИ", "ВСІ КУТИ", "ANGLES"),
    "TABLE": ("ТАБЛИЦА", "ТАБЛИЦЯ", "TABLE"),
    "SMALL": ("СЧИТАТЬ МАЛЫМИ", "ВВАЖАТИ МАЛИМИ", "SMALL"),
    "STRUCTURES": ("СТРУКТУРЫ", "СТРУКТУРИ", "STRUCTURES"),
    "MULTIPLY": ("РАЗМНОЖИТЬ", "РОЗМНОЖИТИ", "MULTIPLY"),
    "ELASTIC_RODS": ("УПРУГИЙ СТЕРЖЕНЬ", "УПРУГИЕ СТЕРЖНИ", "ПРУЖНИЙ СТРИЖЕНЬ",
                     "ПРУЖНІ СТРИЖНІ", "ELASTIC RODS"),
    "SHEET": ("ЛИСТ", "АРКУШ", "SHEET"),
}

#: Instructions that the builder implements.
IMPLEMENTED = frozenset({"COORDINATES", "PSEUDOVELOCITIES", "INITIAL", "TIME", "VARY", "SHOW",
                         "GRAVITY", "CALCULATION", "END", "QUATERNION", "TASK", "AUTHOR",
                         "VARIANT", "BODIES", "UNITS", "CODING", "COMPARE", "COMBINE",
                         "WITHDRAW", "MULTIPLY", "ANGULAR_VELOCITY", "IK_EQUATIONS",
                         "ROLLING", "VIRTUAL_CONSTRAINTS", "BOUNDING_SURFACES",
                         "INITIAL_GUESS", "LIMITS", "EVENTS", "COINCIDE", "SCENE",
                         "UNKNOWNS", "PROGRAMMED_CONSTRAINTS", "INPUTS", "SHAPES",
                         "FREE"})

#: Instructions not implemented that only change how results are presented (plots,
#: animation, files), never the numbers: ignored with a warning. Every other
#: instruction that is not implemented is an error (it would change the results).
PRESENTATION_ONLY = frozenset({"RANGE", "ANIMATION", "BACKGROUND", "PICTURES", "TABLE",
                               "ANGLES"})

#: Instructions whose list is parsed as formulas (the rest keep their text raw).
PARSED_ITEMS = frozenset({"COORDINATES", "PSEUDOVELOCITIES", "INITIAL", "TIME", "VARY",
                          "SHOW", "GRAVITY", "QUATERNION", "BODIES", "COMPARE", "COMBINE",
                          "MULTIPLY", "IK_EQUATIONS", "ROLLING", "VIRTUAL_CONSTRAINTS",
                          "BOUNDING_SURFACES", "INITIAL_GUESS", "LIMITS",
                          "EVENTS", "COINCIDE", "SCENE", "UNKNOWNS",
                          "PROGRAMMED_CONSTRAINTS", "INPUTS", "SHAPES", "FREE"})

#: Approximations of the delta function in a virtual potential (seed 001 eqs. (12),
#: (13)), canonical key → accepted spellings of the second item argument
#: (``f1(alpha, ЭКСПОНЕНТА)``); the first key is the default.
APPROXIMATIONS: dict[str, tuple[str, ...]] = {
    "polynomial": ("ПОЛИНОМ", "ПОЛИНОМИАЛЬНАЯ", "ПОЛІНОМ", "ПОЛІНОМІАЛЬНА", "POLYNOMIAL"),
    "exponential": ("ЭКСПОНЕНТА", "ЭКСПОНЕНЦИАЛЬНАЯ", "ЕКСПОНЕНТА", "ЕКСПОНЕНЦІАЛЬНА",
                    "EXPONENTIAL"),
}

#: Crossing directions of an event (``СОБЫТИЯ := Удар(z, ВНИЗ, …)``), canonical value
#: (as :class:`kidym.simulation.events.Event`'s ``direction``) → accepted spellings.
EVENT_DIRECTIONS: dict[int, tuple[str, ...]] = {
    -1: ("ВНИЗ", "DOWN"),                     # from positive to negative
    1: ("ВВЕРХ", "ВГОРУ", "UP"),              # from negative to positive
    0: ("ОБА", "ЛЮБОЕ", "ОБИДВА", "BOTH", "ANY"),
}

#: Actions of an event besides resets (``СОБЫТИЯ := Конец(x - L, ВВЕРХ, СТОП)``).
EVENT_ACTIONS: dict[str, tuple[str, ...]] = {
    "stop": ("СТОП", "ОСТАНОВ", "ЗУПИНКА", "STOP"),
}

#: The random-sample item of a parameter study (``ВАРЬИРОВАТЬ := СЛУЧАЙНО(200, 7),
#: l2(0.5, 2);``, docs/language.md §5.11).
VARY_RANDOM: tuple[str, ...] = ("СЛУЧАЙНО", "ВИПАДКОВО", "RANDOM")

#: Canonical calculation type → accepted spellings of the value of `РАСЧЕТ`.
CALCULATIONS: dict[str, tuple[str, ...]] = {
    "DYNAMICS": ("ДИНАМИКА", "ДИНАМІКА", "DYNAMICS"),
    "KINEMATICS": ("КИНЕМАТИКА", "КІНЕМАТИКА", "KINEMATICS"),
    "EQUATIONS": ("ПЕЧАТЬ УРАВНЕНИЙ", "ДРУК РІВНЯНЬ", "EQUATIONS"),
    # the motion prescribed by constraints, the forces it needs (their multipliers)
    "KINETOSTATICS": ("КИНЕТОСТАТИКА", "КІНЕТОСТАТИКА", "KINETOSTATICS"),
    # the equilibrium and its stability (kidym.analysis.statics)
    "STATICS": ("СТАТИКА", "STATICS"),
    # eigenvalues and modes about the equilibrium (kidym.analysis.modes)
    "FREE_VIBRATIONS": ("СВОБОДНЫЕ КОЛЕБАНИЯ", "ВІЛЬНІ КОЛИВАННЯ", "FREE VIBRATIONS"),
    # later work (SPEC §3): recognised, an error (they would give other results)
    "INVERSE_KINEMATICS": ("ОБРАТНАЯ ЗАДАЧА КИНЕМАТИКИ", "ОБЕРНЕНА ЗАДАЧА КІНЕМАТИКИ",
                           "INVERSE KINEMATICS"),
    "DIAGNOSTICS": ("ДИАГНОСТИКА", "ДІАГНОСТИКА", "DIAGNOSTICS"),
}

#: Calculation types that later stages implement.
SUPPORTED_CALCULATIONS = frozenset({"DYNAMICS", "KINEMATICS", "EQUATIONS",
                                    "KINETOSTATICS", "INVERSE_KINEMATICS", "STATICS",
                                    "FREE_VIBRATIONS"})

_SPACES = re.compile(r"\s+")


def normalize(name: str) -> str:
    """Upper-case ``name``, treat `Ё` as `Е` and collapse inner whitespace."""
    return _SPACES.sub(" ", name.strip()).upper().replace("Ё", "Е")


def _index(table: dict) -> dict:
    out: dict = {}
    for key, spellings in table.items():
        for spelling in spellings:
            out.setdefault(normalize(spelling), key)
    return out


_KEYWORD_INDEX = _index(KEYWORDS)
_CALCULATION_INDEX = _index(CALCULATIONS)
_APPROXIMATION_INDEX = _index(APPROXIMATIONS)
_EVENT_DIRECTION_INDEX = _index(EVENT_DIRECTIONS)  # type: ignore[arg-type]
_EVENT_ACTION_INDEX = _index(EVENT_ACTIONS)


def lookup(name: str) -> str | None:
    """Canonical key of the instruction spelt ``name``, or ``None`` if there is none.

    Parameters
    ----------
    name : str
        The instruction name as written (any case, Е or Ё, any inner spacing).

    Returns
    -------
    str or None
        A key of :data:`KEYWORDS`.
    """
    return _KEYWORD_INDEX.get(normalize(name))


def lookup_event_direction(word: str) -> int | None:
    """Direction spelt ``word`` (``"вниз"`` → -1, ``"UP"`` → 1, ``"ОБА"`` → 0)."""
    return _EVENT_DIRECTION_INDEX.get(normalize(word))


def lookup_event_action(word: str) -> str | None:
    """Event action spelt ``word`` (``"СТОП"`` → ``"stop"``), or ``None``."""
    return _EVENT_ACTION_INDEX.get(normalize(word))


def lookup_calculation(value: str) -> str | None:
    """Canonical calculation type spelt ``value`` (``"ДИНАМИКА"`` → ``"DYNAMICS"``)."""
    return _CALCULATION_INDEX.get(normalize(value))


def lookup_approximation(word: str) -> str | None:
    """Canonical delta approximation spelt ``word`` (``"Экспонента"`` → ``"exponential"``)."""
    return _APPROXIMATION_INDEX.get(normalize(word))


def _closest(name: str, table: dict[str, tuple[str, ...]], cutoff: float) -> str | None:
    wanted = normalize(name)
    one_word = len(wanted.split()) == 1
    best: tuple[float, str] | None = None
    for spellings in table.values():
        for spelling in spellings:
            # A one-word slip of a multi-word keyword (`КАРДИНАТЫ` for `ОБОБЩЕННЫЕ
            # КООРДИНАТЫ`) is matched against each word too, slightly discounted.
            words = normalize(spelling).split()
            forms = [(" ".join(words), 1.0)]
            if one_word and len(words) > 1:
                forms += [(w, 0.95) for w in words if len(w) > 3]
            for form, weight in forms:
                total = len(wanted) + len(form)
                if total and 2 * min(len(wanted), len(form)) / total * weight < cutoff:
                    continue  # too different in length to be close (and a long name is slow)
                ratio = weight * difflib.SequenceMatcher(None, wanted, form).ratio()
                if ratio >= cutoff and (best is None or ratio > best[0]):
                    best = (ratio, spelling)
    return None if best is None else best[1]


def closest(name: str) -> str | None:
    """The accepted instruction spelling nearest to ``name``, for "did you mean".

    Ties go to the spelling listed first in :data:`KEYWORDS`; ``None`` when nothing
    is reasonably close.
    """
    return _closest(name, KEYWORDS, 0.6)


def closest_calculation(value: str) -> str | None:
    """The accepted calculation-type spelling nearest to ``value``, or ``None``."""
    return _closest(value, CALCULATIONS, 0.6)


def spelling(key: str) -> str:
    """The spelling of instruction ``key`` shown in messages (the first listed)."""
    return KEYWORDS[key][0]


#: Ukrainian spellings that have no letter of their own to tell them from Russian.
_UK = {"TIME": "ЧАС", "SHOW": "ПОКАЗАТИ", "CALCULATION": "РОЗРАХУНОК", "TASK": "РОБОТА",
       "AUTHOR": "ВИКОНАВ", "MULTIPLY": "РОЗМНОЖИТИ", "CODING": "КОДУВАННЯ",
       "WITHDRAW": "ВИЛУЧИТИ"}
_UK_LETTERS = frozenset("ІіЇїЄєҐґ")
LANGUAGES = ("ru", "uk", "en")


def _in_language(spellings: tuple[str, ...], lang: str, explicit: str | None) -> str:
    if lang == "en":
        return next((s for s in spellings if s.isascii()), spellings[0])
    if lang == "uk":
        if explicit:
            return explicit
        return next((s for s in spellings if _UK_LETTERS & set(s)), spellings[0])
    return spellings[0]


def spelling_in(key: str, lang: str) -> str:
    """The spelling of instruction ``key`` in ``lang`` (``"ru"``, ``"uk"`` or ``"en"``).

    Examples
    --------
    >>> spelling_in("PSEUDOVELOCITIES", "uk"), spelling_in("SHOW", "en")
    ('ПСЕВДОШВИДКОСТІ', 'SHOW')
    """
    return _in_language(KEYWORDS[key], lang, _UK.get(key) if lang == "uk" else None)


def language_of(written: str) -> str:
    """The language a keyword is written in: ``"en"`` (ASCII), ``"uk"`` (a Ukrainian
    letter or spelling) or ``"ru"`` — for messages in the language of the model.

    Examples
    --------
    >>> language_of("CALCULATION"), language_of("РОЗРАХУНОК"), language_of("РАСЧЕТ")
    ('en', 'uk', 'ru')
    """
    if written.isascii():
        return "en"
    if _UK_LETTERS & set(written) or normalize(written) in {normalize(w) for w in _UK.values()}:
        return "uk"
    return "ru"


def calculation_in(key: str, lang: str) -> str:
    """The spelling of calculation type ``key`` in ``lang`` (``KINEMATICS`` → ``КІНЕМАТИКА``)."""
    return _in_language(CALCULATIONS[key], lang, None)
