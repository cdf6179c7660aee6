"""The emitter of the generated C: hoisting, CSE, big routines split into parts.

:class:`Emitter` holds the naming, the hoisted constants and the printer of one
source file (:func:`kidym.codegen.emit.generate_c`); :meth:`Emitter.routine` writes
the C statements of one routine: the named quantities in dependency order, common
subexpressions eliminated (SymEngine ``cse``), parameter-only parts hoisted into
``kidym_constants``, long sums summed in parts, and a big routine cut into functions
compiled apart (:func:`dependency_order`, :data:`PART_STATEMENTS`, :data:`SPLIT_ABOVE`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction

import symengine as se

from kidym.codegen import inputs_c
from kidym.codegen.cprint import CPrinter, OpCount
from kidym.eom.equations import Equations
from kidym.symbolic.identifiers import RESERVED, IdentifierMap, comment_text

Expr = se.Basic

_LOCALS = frozenset({"t", "y", "p", "c", "g", "k", "qdot", "ynew", "ydot", "out", "M", "F",
                     "i", "j", "n", "L", "b", "d", "s", "status"})

#: Opens every routine: a routine need not read each of its arguments (a model without
#: events, a right-hand side that does not depend on time), and ``-Wextra`` would warn.
UNUSED = "    (void)t; (void)y; (void)p; (void)c;"

#: Statements per function when a routine is split (:meth:`Emitter.routine`). The
#: compiler's time grows faster than the size of a function; measured on the 30-link
#: chain's right-hand side (4 844 statements, gcc 12 -O2, CPU seconds of all compiler
#: runs): 100 → 7.0 s, 200 → 6.2, 300 → 6.0, 600 → 6.4, 1000 → 7.1, 2000 → 9.7, one
#: function 24 s; the right-hand side ran equally fast from 100 to 1000 (``docs/compiled.md``).
PART_STATEMENTS = 300
#: A routine is split only above this many statements. Below, one function compiles
#: about as fast and runs a little faster (the 20-link chain, 2 404 statements: 9 %
#: faster as one function); above, gcc's code for one function falls off (the 25- and
#: 30-link chains, 3 525 and 4 844 statements, ran 0.79x and 0.78-0.94x as long in
#: parts, which also compiled in a third of the CPU time; ``docs/compiled.md``).
SPLIT_ABOVE = 3000


def dependency_order(defined: Sequence[se.Symbol | None],
                      uses: Sequence[set[se.Symbol]]) -> list[int]:
    """The statements (indices) in an order that keeps each value near its uses.

    ``defined[i]`` is the symbol statement ``i`` defines (``None`` for a store into an
    output array), ``uses[i]`` the symbols it reads. The order is depth-first from each
    result (a statement whose value no statement uses), results in their own order,
    statements needed in their order: each statement comes right after those it needs
    that are not written yet (post-order), so the entries of ``M`` of one row follow
    the partial velocities they are made of. The dependency order of the named
    quantities writes every link's kinematics before any entry of ``M``; cut into parts
    of 300 statements it left 2 648 of the 30-link chain's 4 844 values crossing parts
    (3 695 reads in later parts), this order 739 (2 196 reads).
    """
    where = {s: i for i, s in enumerate(defined) if s is not None}
    needs = [sorted({where[s] for s in u if s in where}) for u in uses]
    used = [False] * len(defined)
    for ps in needs:
        for j in ps:
            used[j] = True
    done = [False] * len(defined)
    order: list[int] = []
    for root in (i for i in range(len(defined)) if not used[i]):
        stack = [(root, 0)]
        while stack:
            i, k = stack.pop()
            if done[i]:
                continue
            if k < len(needs[i]):
                stack.append((i, k + 1))
                j = needs[i][k]
                if not done[j]:
                    stack.append((j, 0))
            else:
                done[i] = True
                order.append(i)
    return order


#: Terms of the longest sum written as one C expression; a longer one is summed in
#: parts of this many (temporaries). The 60-link chain's ``energy't`` is a sum of about
#: 10 000 terms: as one expression (a 290 kB line) gcc took 14 s and 180 MB on it
#: alone, half the CPU time of compiling the whole model.
SUM_TERMS = 64


def _exact(value: float) -> Expr:
    f = Fraction(value)
    return se.Integer(f.numerator) if f.denominator == 1 else se.Rational(f.numerator,
                                                                          f.denominator)


class Emitter:
    """Holds the naming, the hoisted constants and the printer of one source file."""

    def __init__(self, eq: Equations, *, fold: bool | Mapping[str, float], cse: bool,
                 hoist: bool) -> None:
        self.eq = eq
        self.cse = cse
        self.hoist_enabled = hoist
        self.names = IdentifierMap(RESERVED | _LOCALS)
        self.time = eq.graph.time
        self.state_index = {s: i for i, s in enumerate((*eq.coordinates, *eq.speeds))}
        # ẇ, where an output uses it: ydot[n_q + j] from kidym_rhs (see `routine`)
        self.acceleration_index = {a: eq.n_q + j for j, a in enumerate(eq.accelerations)}
        self.params = {s: i for i, s in enumerate(eq.parameters)}
        self.replace: dict[se.Symbol, Expr] = {}
        if fold:
            values = eq.model.parameter_values
            if isinstance(fold, Mapping):
                values.update({k: float(v) for k, v in fold.items()})
            self.replace = {s: _exact(values[str(s)]) for s in self.params}
        self.const_index: dict[se.Symbol, int] = {}
        self.const_lines: list[tuple[se.Symbol, Expr, str]] = []
        self.const_of_expr: dict[Expr, se.Symbol] = {}
        self.temp_names: dict[se.Symbol, str] = {}   # of the routine being written
        self.n_temps = 0
        self.parts: list[str] = []                    # functions of a split routine
        self.part_names: list[tuple[str, str]] = []   # their names and output arguments
        self.printer = CPrinter(self.name_of)
        #: symbols whose values the caller of a routine has, as C expressions (the
        #: solution ``x`` read by the Jacobian, :mod:`kidym.codegen.jacobian_c`)
        self.inputs: dict[se.Symbol, str] = {}
        #: the external inputs of ``ВХОДЫ``, read from the thread-local ``kidym_u``
        #: (:mod:`kidym.codegen.inputs_c`); never parameters, so never hoisted
        self.external = {s: inputs_c.SLOT.format(k=k) for k, s in enumerate(eq.inputs)}

    # --------------------------------------------------------------- naming
    def name_of(self, s: se.Symbol) -> str:
        if s in self.inputs:
            return self.inputs[s]
        if s in self.external:
            return self.external[s]
        if s == self.time:
            return "t"
        if s in self.const_index:
            return f"c[{self.const_index[s]}]"
        if s in self.temp_names:
            return self.temp_names[s]
        if s in self.params:
            return f"p[{self.params[s]}]"
        return self.names(str(s))

    def _is_constant(self, e: Expr) -> bool:
        fs = e.free_symbols
        return bool(fs) and all(s in self.params or s in self.const_index for s in fs)

    def _new_constant(self, expr: Expr, sym: se.Symbol | None = None,
                      label: str = "") -> se.Symbol:
        if sym is None:
            if expr in self.const_of_expr:
                return self.const_of_expr[expr]
            # a name no model can hold (`#` is not a name character), and the same in
            # every run: SymEngine orders terms by hash, and the source must not change
            sym = se.Symbol(f"kidym#c{len(self.const_index)}")
            self.const_of_expr[expr] = sym
        self.const_index[sym] = len(self.const_index)
        self.const_lines.append((sym, expr, label))
        return sym

    # -------------------------------------------------------------- hoisting
    def hoist(self, e: Expr) -> Expr:
        """``e`` with its parameter-only parts replaced by hoisted constants."""
        if not self.hoist_enabled or e.is_Number or e.is_Symbol:
            return e
        constant = [s in self.params or s in self.const_index for s in e.free_symbols]
        if not any(constant):       # no parameter in it: nothing to hoist (most formulas)
            return e
        if all(constant):
            return self._new_constant(e)
        if e.is_Add or e.is_Mul:
            flags = [a.is_Number or self._is_constant(a) for a in e.args]
            const = [a for a, f in zip(e.args, flags) if f]
            rest = [self.hoist(a) for a, f in zip(e.args, flags) if not f]
            op = se.Add if e.is_Add else se.Mul
            if len(const) > 1 or (len(const) == 1 and not (const[0].is_Number
                                                          or const[0].is_Symbol)):
                group = op(*const)
                const = [group if group.is_Number else self._new_constant(group)]
            return op(*const, *rest)
        if type(e).__name__ == "Piecewise":
            a = list(e.args)
            return se.Piecewise(*[(self.hoist(v), c) for v, c in zip(a[0::2], a[1::2])])
        if not e.args:
            return e
        return e.func(*[self.hoist(a) for a in e.args])

    # -------------------------------------------------------------- routines
    def routine(self, roots: Sequence[Expr], targets: Sequence[str],
                indent: str = "    ", split: tuple[str, str, str] | None = None,
                ) -> tuple[list[str], OpCount]:
        """C statements computing ``roots`` into ``targets``, and their operations.

        ``split = (name, outputs declaration, outputs arguments)``: when the routine
        has more than :data:`SPLIT_ABOVE` statements, they are written as
        functions ``<name><k>`` of at most that many statements each (in
        :attr:`parts`, one translation unit each, compiled in parallel); the values
        one part passes to a later one go through a workspace ``w``, and the
        statements returned call the parts in order.
        """
        inter = self.eq.intermediates(list(roots))
        statements: list[tuple[se.Symbol, Expr]] = []
        for s, f in inter:
            if s in self.replace or s in self.const_index:
                continue
            f = f.xreplace(self.replace) if self.replace else f
            if not f.free_symbols:
                self.replace[s] = f
            elif self.hoist_enabled and self._is_constant(f):
                self._new_constant(f, s, label=str(s))
            else:
                statements.append((s, self.hoist(f)))
        roots = [self.hoist(se.sympify(r).xreplace(self.replace) if self.replace
                            else se.sympify(r)) for r in roots]
        exprs = [f for _, f in statements] + list(roots)
        if self.cse and exprs:
            reps, reduced = se.cse(exprs)
        else:
            reps, reduced = [], exprs
        # SymEngine names its temporaries x0, x1 … avoiding only the symbols of these
        # expressions: they are temporaries in this routine only (a model's `x2` in
        # another routine is the model's). `cse<k>` matches RESERVED_PATTERN: no model
        # name is ever given it.
        first = self.n_temps
        self.temp_names = {s: f"cse{first + k}" for k, (s, _) in enumerate(reps)}
        self.n_temps += len(reps)
        temps: dict[se.Symbol, Expr] = {}
        order: dict[se.Symbol, tuple[int, ...]] = {}

        def chunked(e: Expr, where: int) -> Expr:
            """``e`` with every sum of more than SUM_TERMS terms in it (through sums,
            products and powers) written as a sum of partial sums: new temporaries,
            ordered just before position ``where``."""
            if not (e.is_Add or e.is_Mul or e.is_Pow):
                return e
            args = e.args
            new = [chunked(a, where) for a in args]
            if any(n is not a for n, a in zip(new, args)):
                e = e.func(*new)
            if not (e.is_Add and len(args) > SUM_TERMS):
                return e
            while e.is_Add and len(e.args) > SUM_TERMS:
                terms, sums = e.args, []
                for a in range(0, len(terms), SUM_TERMS):
                    sym = se.Symbol(f"kidym#sum{self.n_temps}")   # no model name has `#`
                    self.temp_names[sym] = f"cse{self.n_temps}"
                    self.n_temps += 1
                    temps[sym] = se.Add(*terms[a:a + SUM_TERMS])
                    order[sym] = (where, 0, len(order))
                    sums.append(sym)
                e = se.Add(*sums)
            return e

        for k, (sym, e) in enumerate(reps):
            temps[sym] = chunked(e, k)
            order[sym] = (k, 1)
        body = [(sym, chunked(reduced[k], len(reps))) for k, (sym, _) in enumerate(statements)]
        out_exprs = [chunked(e, len(reps)) for e in reduced[len(statements):]]

        emitted: set[se.Symbol] = set()
        lines: list[tuple[se.Symbol | None, str | None, Expr]] = []

        def need(expr: Expr) -> None:
            pending = {s for s in expr.free_symbols if s in temps and s not in emitted}
            closure: set[se.Symbol] = set()
            while pending:
                s = pending.pop()
                closure.add(s)
                pending |= {d for d in temps[s].free_symbols
                            if d in temps and d not in emitted and d not in closure}
            for s in sorted(closure, key=order.__getitem__):
                lines.append((s, None, temps[s]))
                emitted.add(s)

        for s, e in body:
            need(e)
            lines.append((s, None, e))
        for target, e in zip(targets, out_exprs):
            need(e)
            lines.append((None, target, e))

        self.printer.reset()
        text: list[str] = []
        used: set[se.Symbol] = set()
        uses: list[set[se.Symbol]] = []
        for s, target, e in lines:
            code = self.printer(e)
            used |= e.free_symbols
            uses.append(set(e.free_symbols))
            if target is not None:
                text.append(f"{indent}{target} = {code};")
            elif s in temps:
                text.append(f"{indent}const double {self.name_of(s)} = {code};")
            else:
                text.append(f"{indent}const double {self.name_of(s)} = {code};"
                            f"  /* {comment_text(str(s))} */")
        count = self.printer.reset()
        defined = (set(self.state_index) | set(self.params) | set(self.const_index)
                   | set(temps) | {s for s, _ in statements} | {self.time}
                   | set(self.acceleration_index) | set(self.inputs) | set(self.external))
        unknown = sorted(str(s) for s in used - defined)
        if unknown:
            raise ValueError("cannot generate C: no value or argument for "
                             + ", ".join(f"`{u}`" for u in unknown)
                             + f" in model `{self.eq.model.name}`")
        accelerations = {s: i for s, i in self.acceleration_index.items() if s in used}
        if accelerations:
            # the accelerations ẇ = M⁻¹F: the whole right-hand side, then its speed part
            solve = [f"{indent}double ydot[{self.eq.n_q + self.eq.n_w}];",
                     f"{indent}kidym_rhs(t, y, p, c, ydot);"]
        fill = [inputs_c.FILL] if used & set(self.external) else []
        if split is not None and len(lines) > max(SPLIT_ABOVE, PART_STATEMENTS):
            calls = self._split(split, [s for s, _, _ in lines], uses, text,
                                given={s: f"ydot[{i}]" for s, i in accelerations.items()})
            self.temp_names = {}
            return fill + (solve + calls if accelerations else calls), count
        head = fill + self._states(used, indent)
        if accelerations:
            head += solve + [f"{indent}const double {self.name_of(s)} = ydot[{i}];"
                             f"  /* {comment_text(str(s))} */"
                             for s, i in accelerations.items()]
        self.temp_names = {}  # the temporaries end with the routine
        return head + text, count

    def _states(self, used: set[se.Symbol], indent: str = "    ") -> list[str]:
        """The statements reading the states ``used`` from ``y``."""
        return [f"{indent}const double {self.name_of(s)} = y[{i}];  /* {comment_text(str(s))} */"
                for s, i in self.state_index.items() if s in used]

    def _split(self, split: tuple[str, str, str], defined: list[se.Symbol | None],
               uses: list[set[se.Symbol]], text: list[str],
               given: Mapping[se.Symbol, str]) -> list[str]:
        """Write the statements as parts (see :meth:`routine`); the calls of the parts.

        The statements are put in :func:`dependency_order` and cut into parts of
        :data:`PART_STATEMENTS`. A value used by a later part is stored in the workspace
        ``w`` right after it is computed, and read back just before its first use in
        each later part; all pointers are ``restrict`` (no array of a call overlaps
        another), so the compiler may keep and reorder these loads and stores freely.
        ``given`` are values the caller has before the parts run (the accelerations, C
        expressions such as ``ydot[4]``): they reach the parts through ``w`` too.
        """
        name, declaration, arguments = split
        order = dependency_order(defined, uses)
        chunks = [order[a:a + PART_STATEMENTS] for a in range(0, len(order), PART_STATEMENTS)]
        home = {s: -1 for s in given}
        for k, chunk in enumerate(chunks):
            home.update({defined[i]: k for i in chunk if defined[i] is not None})
        imports: list[set[se.Symbol]] = []
        crossing: set[se.Symbol] = set()
        for k, chunk in enumerate(chunks):
            wanted = {s for i in chunk for s in uses[i] if home.get(s, k) < k}
            imports.append(wanted)
            crossing |= wanted
        # slots in the order the values are computed: the same source in every run
        slot = {s: n for n, s in enumerate(
            [s for s in given if s in crossing]
            + [defined[i] for i in order if defined[i] in crossing])}
        calls = [f"    double w[{max(len(slot), 1)}];",
                 *(f"    w[{slot[s]}] = {value};" for s, value in given.items() if s in slot)]
        outputs = declaration.replace("*", "*restrict ")
        for k, chunk in enumerate(chunks):
            body: list[str] = []
            loaded: set[se.Symbol] = set()
            for i in chunk:
                for s in sorted(uses[i] & imports[k] - loaded, key=slot.__getitem__):
                    body.append(f"    const double {self.name_of(s)} = w[{slot[s]}];")
                    loaded.add(s)
                body.append(text[i])
                if defined[i] in slot:
                    body.append(f"    w[{slot[defined[i]]}] = {self.name_of(defined[i])};")
            self.parts.append("\n".join([
                f"void {name}{k}(double t, const double *restrict y, const double *restrict p,"
                f" const double *restrict c, double *restrict w, {outputs}) {{",
                UNUSED + " (void)w;"
                + "".join(f" (void){a};" for a in re.findall(r"\*(\w+)", declaration)),
                *self._states(set().union(*(uses[i] for i in chunk))), *body, "}\n"]))
            self.part_names.append((f"{name}{k}", declaration))
            calls.append(f"    {name}{k}(t, y, p, c, w, {arguments});")
        return calls

    def constants_routine(self) -> tuple[list[str], OpCount]:
        self.printer.reset()
        lines = []
        for sym, expr, label in self.const_lines:
            comment = f"  /* {comment_text(label)} */" if label else ""
            lines.append(f"    c[{self.const_index[sym]}] = {self.printer(expr)};{comment}")
        return lines, self.printer.reset()
