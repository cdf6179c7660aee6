"""A DAG of named intermediate quantities with chain-rule derivatives.

This is what keeps kidym's equations compact (SPEC §2 "Staying compact"): every
kinematic quantity is a *named* symbol whose formula is short and refers only to
earlier names, and the derivative of a named quantity is again a named, memoised
quantity formed by the chain rule through its *direct* dependencies — exactly as
KiDyM does (``KIDYM_LANGUAGE.md`` §6, ``X't`` and ``X'y`` variables). Nothing is
ever expanded unless :meth:`Graph.expand` is asked for it.

Base symbols are the state and time: coordinates ``q`` (whose rates are given by
the kinematic equations), speeds ``w`` and time ``t``. Parameters are constants.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterable

import symengine as se

from kidym.symbolic.derivatives import derivative

Expr = se.Basic
ZERO = se.Integer(0)
ONE = se.Integer(1)


_UNPICKLING = threading.Lock()


def _unpickled(state: bytes) -> Graph:
    """A graph whose state (a pickle of its attributes) is read on first use."""
    graph = Graph.__new__(Graph)
    graph.__dict__["_stored"] = state
    return graph


def _is_atomic(expr: Expr) -> bool:
    """Numbers, symbols and ``-symbol`` need no name of their own."""
    if expr.is_Number or expr.is_Symbol:
        return True
    if expr.is_Mul and len(expr.args) == 2:
        a, b = expr.args
        return (a.is_Number and b.is_Symbol) or (b.is_Number and a.is_Symbol)
    return False


class Graph:
    """Ordered DAG of named intermediate quantities.

    Parameters
    ----------
    time : symengine.Symbol
        The time symbol.
    coordinates : sequence of Symbol
        The coordinates ``q``; give each its rate ``q̇ = B w + β`` with
        :meth:`set_coordinate_rate` before taking any derivative.
    speeds : sequence of Symbol
        The independent speeds ``w``. Their rates (``ẇ``) are never substituted:
        :meth:`dt` gives the *velocity part* of a time derivative, i.e. the
        derivative with ``ẇ = 0``, which is exact for quantities free of speeds and
        is the velocity-product remainder ``(dW/dt)·w + …`` for those linear in them.
    """

    def __init__(self, time: se.Symbol, coordinates: Iterable[se.Symbol],
                 speeds: Iterable[se.Symbol], inputs: Iterable[se.Symbol] = ()) -> None:
        self.time = time
        self.coordinates = tuple(coordinates)
        self.speeds = tuple(speeds)
        #: controls (``НЕИЗВЕСТНЫЕ``): tracked like states so that ``∂/∂u`` goes through
        #: names, but with no time derivative (:meth:`dt` of one is an error)
        self.inputs = tuple(inputs)
        self._rates: dict[se.Symbol, Expr] = {time: ONE}
        for q in self.coordinates:
            self._rates[q] = ZERO
        for w in self.speeds:
            self._rates[w] = ZERO
        self._state = frozenset(self._rates) | frozenset(self.inputs)
        # each state symbol (time, coordinates, speeds, inputs) is one bit; a named
        # quantity's dependencies are the OR of its symbols' masks (an int), so that
        # naming a quantity costs O(symbols · n/64), not O(symbols · n) set unions
        self._order: tuple[se.Symbol, ...] = (*self._rates, *self.inputs)
        self._bit: dict[se.Symbol, int] = {s: 1 << i for i, s in enumerate(self._order)}
        self._exprs: dict[se.Symbol, Expr] = {}
        self._deps: dict[se.Symbol, int] = {}
        self._sets: dict[int, frozenset[se.Symbol]] = {}  # a mask's symbols, memoised
        self._taken: set[str] = {str(s) for s in self._rates}
        self._dt_memo: dict[se.Symbol, Expr] = {}
        self._partial_memo: dict[tuple[se.Symbol, se.Symbol], Expr] = {}

    def copy(self) -> Graph:
        """An independent copy: what is named in it never reaches this graph.

        The workspace of quantities formed after the equations (the analyses'
        derivatives, :class:`kidym.analysis.derivatives.StateDerivatives`), so that the
        equations' own graph stays as :func:`kidym.derive` left it.
        """
        other = Graph.__new__(Graph)
        other.__dict__.update({k: v.copy() if isinstance(v, dict | set | list) else v
                               for k, v in self.__dict__.items()})
        return other

    # ------------------------------------------------------------------ pickling
    def __reduce__(self) -> tuple:
        """Pickled as one blob, unpickled on first use (:func:`_unpickled`): a cached
        start of a big model that reads its library's layout from the cache
        (:mod:`kidym.eom.stored`) never touches the tens of thousands of formulas."""
        state = self.__dict__.get("_stored")
        if state is None:
            state = pickle.dumps(self.__dict__, protocol=pickle.HIGHEST_PROTOCOL)
        return (_unpickled, (state,))

    def __getattr__(self, name: str) -> object:
        # only reached when an attribute is missing: a graph read back from a pickle
        # (_unpickled) takes its state on first use (once, whichever thread asks first)
        state = self.__dict__
        with _UNPICKLING:
            if "_stored" in state:
                state.update(pickle.loads(state["_stored"]))
                del state["_stored"]
        try:
            return state[name]
        except KeyError:
            raise AttributeError(f"'Graph' object has no attribute {name!r}") from None

    # ------------------------------------------------------------------ naming
    def __contains__(self, sym: object) -> bool:
        return sym in self._exprs

    def __len__(self) -> int:
        return len(self._exprs)

    @property
    def definitions(self) -> dict[se.Symbol, Expr]:
        """All named quantities in definition (hence dependency) order."""
        return dict(self._exprs)

    def formula(self, sym: se.Symbol) -> Expr:
        """The formula of a named quantity."""
        return self._exprs[sym]

    def is_state(self, sym: se.Symbol) -> bool:
        """Whether ``sym`` is a coordinate, a speed or time."""
        return sym in self._state

    def fresh(self, label: str) -> str:
        """A name not used yet, ``label`` itself if free."""
        if label not in self._taken:
            return label
        k = 2
        while f"{label}~{k}" in self._taken:
            k += 1
        return f"{label}~{k}"

    def define(self, label: str, expr: Expr, *, keep: bool = False,
               exact_name: bool = False) -> Expr:
        """Name ``expr`` and return its symbol (or ``expr`` itself if it is atomic).

        Parameters
        ----------
        label : str
            Preferred name; made unique with a ``~k`` suffix if taken.
        expr : Expr
            Formula over state symbols, parameters and earlier names.
        keep : bool
            Name it even if atomic (user definitions keep their names).
        exact_name : bool
            The name must be exactly ``label`` (raise ``ValueError`` if taken).
        """
        expr = se.sympify(expr)
        if not keep and _is_atomic(expr):
            return expr
        if exact_name and label in self._taken:
            raise ValueError(f"name `{label}` is defined twice")
        sym = se.Symbol(self.fresh(label))
        self._taken.add(str(sym))
        self._exprs[sym] = expr
        self._deps[sym] = self._mask(expr)
        return sym

    def reserve(self, name: str) -> None:
        """Mark a name as used (so generated names never take a user's name)."""
        self._taken.add(name)

    def release(self, name: str) -> None:
        """Free a reserved name for its owner (a name already defined stays taken)."""
        if se.Symbol(name) not in self._exprs:
            self._taken.discard(name)

    def set_rate(self, sym: se.Symbol, rate: Expr) -> None:
        """Declare the velocity part of ``d(sym)/dt`` (known from kinematics)."""
        self._dt_memo[sym] = rate

    def set_partial(self, sym: se.Symbol, base: se.Symbol, value: Expr) -> None:
        """Declare ``∂sym/∂base`` (known from kinematics, e.g. partial velocities)."""
        self._partial_memo[(sym, base)] = value

    def set_coordinate_rate(self, q: se.Symbol, rate: Expr) -> None:
        """Give coordinate ``q`` its rate ``q̇`` (a row of ``B w + β``; may use names)."""
        if q not in self.coordinates:
            raise KeyError(q)
        if self._dt_memo or self._partial_memo:
            raise RuntimeError("coordinate rates must be set before any derivative is taken")
        self._rates[q] = se.sympify(rate)

    # ------------------------------------------------------------ dependencies
    def _mask(self, expr: Expr) -> int:
        """The state symbols ``expr`` depends on, one bit each (see ``_bit``)."""
        mask = 0
        deps, bit = self._deps, self._bit
        for s in expr.free_symbols:
            m = deps.get(s)
            if m is None:
                m = bit.get(s, 0)
            mask |= m
        return mask

    def dependencies(self, expr: Expr) -> frozenset[se.Symbol]:
        """State symbols (coordinates, speeds, time) that ``expr`` depends on."""
        mask = self._mask(expr)
        out = self._sets.get(mask)
        if out is None:
            out = self._sets[mask] = frozenset(s for i, s in enumerate(self._order)
                                               if mask >> i & 1)
        return out

    def depends_on(self, expr: Expr, base: se.Symbol) -> bool:
        """Whether ``expr`` depends (through names) on the state symbol ``base``."""
        return bool(self._mask(expr) & self._bit.get(base, 0))

    def is_constant(self, expr: Expr) -> bool:
        """Whether ``expr`` depends on no state symbol (parameters only)."""
        return not self._mask(expr)

    # ------------------------------------------------------------- derivatives
    def dt(self, expr: Expr) -> Expr:
        """Velocity part of the time derivative (``ẇ`` taken as zero), by the chain rule.

        Each named quantity's derivative is itself named ``X't`` and memoised.
        """
        expr = se.sympify(expr)
        total = ZERO
        for s in expr.free_symbols:
            rate = self._rate(s)
            if rate != 0:
                total += derivative(expr, s) * rate
        return total

    def _rate(self, s: se.Symbol) -> Expr:
        if s in self._rates:
            return self._rates[s]
        if s in self.inputs:
            raise ValueError(f"the time derivative of control `{s}` is not defined: a "
                             "control is known only as the solution of its constraints")
        if s not in self._exprs:
            return ZERO  # a parameter
        if s in self._dt_memo:
            return self._dt_memo[s]
        if not self._deps[s]:
            value: Expr = ZERO
        else:
            value = self.define(f"{s}'t", self.dt(self._exprs[s]))
        self._dt_memo[s] = value
        return value

    def diff(self, expr: Expr, base: se.Symbol) -> Expr:
        """Partial derivative of ``expr`` with respect to a state symbol, through names.

        The partial of a named quantity ``X`` is named ``X'base`` and memoised.
        """
        expr = se.sympify(expr)
        total = ZERO
        for s in expr.free_symbols:
            if s == base:
                total += derivative(expr, s)
            elif s in self._exprs and self._deps[s] & self._bit.get(base, 0):
                d = self._partial(s, base)
                if d != 0:
                    total += derivative(expr, s) * d
        return total

    def _partial(self, s: se.Symbol, base: se.Symbol) -> Expr:
        key = (s, base)
        if key not in self._partial_memo:
            self._partial_memo[key] = self.define(f"{s}'{base}", self.diff(self._exprs[s], base))
        return self._partial_memo[key]

    # ------------------------------------------------------------------- views
    def needed(self, exprs: Iterable[Expr]) -> list[se.Symbol]:
        """Named quantities that ``exprs`` need, in dependency order."""
        seen: set[se.Symbol] = set()
        stack = [s for e in exprs for s in se.sympify(e).free_symbols if s in self._exprs]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            stack.extend(d for d in self._exprs[s].free_symbols
                         if d in self._exprs and d not in seen)
        return [s for s in self._exprs if s in seen]

    def mentions(self, exprs: Iterable[Expr], symbols: set[se.Symbol]) -> bool:
        """Whether ``exprs``, or a named quantity they need, contain one of ``symbols``."""
        if not symbols:
            return False
        exprs = [se.sympify(e) for e in exprs]
        if any(symbols & e.free_symbols for e in exprs):
            return True
        return any(symbols & self._exprs[s].free_symbols for s in self.needed(exprs))

    def expand(self, expr: Expr) -> Expr:
        """``expr`` with every named quantity substituted (the swollen form; small models)."""
        expr = se.sympify(expr)
        order = self.needed([expr])
        values: dict[se.Symbol, Expr] = {}
        for s in order:
            values[s] = self._exprs[s].xreplace(values) if values else self._exprs[s]
        return expr.xreplace(values) if values else expr
