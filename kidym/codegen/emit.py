"""C99 source of a model's Cauchy form, outputs, events and reset maps.

The named quantities are emitted in dependency order (they are already shared:
SPEC §2), then common subexpressions over everything one routine computes are
eliminated (SymEngine ``cse``), so that a function of the same argument is
computed once. Quantities that depend on parameters only — named ones and the
parameter-only parts of sums and products — are *hoisted* into
``kidym_constants``, computed once per parameter vector rather than per step.
Parameters are a runtime vector ``p`` unless ``fold=True`` writes their values
into the code. ``M ẇ = F`` is solved inside C by a dense Cholesky factorisation
(``M`` is symmetric positive definite; a non-positive pivot is reported as a
singular mass matrix).

Generated routines (all ``double`` arrays, row-major ``M``)::

    void kidym_constants(const double *p, double *c);
    void kidym_eval(double t, const double *y, const double *p, const double *c,
                    double *qdot, double *M, double *F);
    int  kidym_rhs(double t, const double *y, const double *p, const double *c,
                   double *ydot);      /* 0 ok, 1 singular M, 2 not finite */
    void kidym_outputs(double t, const double *y, const double *p, const double *c,
                       double *out);
    void kidym_events(double t, const double *y, const double *p, const double *c,
                      double *g);
    void kidym_reset(int k, double t, const double *y, const double *p,
                     const double *c, double *ynew);
    int  kidym_jac(double t, const double *y, const double *p, const double *c,
                   double *J);         /* with jacobian=True: J = dydot/dy, row-major;
                                          0 ok, 1 singular, 2 not finite, 3 no memory;
                                          without: -1 (kidym_jacobian is 0) */

The Jacobian (``generate_c(..., jacobian=True)``) is analytic: the partial derivatives
of ``q̇``, ``M`` and ``F`` (with constraints the block ``γ, Φ, c, G`` too) by every
state are named quantities formed by the chain rule over the graph, the same ones
:mod:`kidym.simulate.jacobian` evaluates in Python, emitted like the right-hand side
(hoisting, CSE, split into parts when big); ``kd_jac`` then solves
``A ∂x/∂y_k = ∂b/∂y_k − ∂A/∂y_k x`` for every state with one LU factorisation of ``A``
(``M``, or the augmented matrix ``[M −Gᵀ; G 0]``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import symengine as se

from kidym.codegen.constraints_c import constraint_source
from kidym.codegen.controls_c import controls_source
from kidym.codegen.cprint import CPrinter, OpCount
from kidym.codegen.jacobian_c import jacobian_roots, jacobian_source
from kidym.eom.equations import Equations
from kidym.simulate.events import Event, all_events, parse_expression
from kidym.symbolic.identifiers import RESERVED, IdentifierMap, comment_text

Expr = se.Basic

#: Version of the emitted interface; part of the cache key.
ABI_VERSION = 3

_LOCALS = frozenset({"t", "y", "p", "c", "g", "k", "qdot", "ynew", "ydot", "out", "M", "F",
                     "i", "j", "n", "L", "b", "d", "s", "status"})

#: Opens every routine: a routine need not read each of its arguments (a model without
#: events, a right-hand side that does not depend on time), and ``-Wextra`` would warn.
_UNUSED = "    (void)t; (void)y; (void)p; (void)c;"

#: Relative pivot below which the mass matrix is called singular.
PIVOT_TOLERANCE = 1e-13

_HELPERS = """\
static inline double kd_pow2(double x) { return x*x; }
static inline double kd_pow3(double x) { return x*x*x; }
static inline double kd_pow4(double x) { double s = x*x; return s*s; }
static inline double kd_powi(double x, int n) {
    double r = 1.0;
    while (n) { if (n & 1) r *= x; x *= x; n >>= 1; }
    return r;
}
static inline double kd_sign(double x) { return (x > 0.0) - (x < 0.0); }
static inline double kd_cot(double x) { return 1.0/tan(x); }
static inline double kd_sec(double x) { return 1.0/cos(x); }
static inline double kd_csc(double x) { return 1.0/sin(x); }
static inline double kd_acot(double x) { return atan(1.0/x); }
"""


@dataclass(frozen=True)
class CCode:
    """Generated C source of one model and what it holds.

    Attributes
    ----------
    source : str
        The C99 text (deterministic: same equations and options → same bytes).
    model_name : str
        Name of the model.
    state_names, parameter_names, output_names, event_names : tuple of str
        Layouts of ``y``, ``p``, ``out`` and ``g``.
    n_q, n_w, n_constants : int
        Sizes.
    counts : dict of str to OpCount
        Operations per routine (``constants``, ``rhs``, ``solve``, ``outputs``,
        ``events``, ``resets``).
    mf_counts : OpCount
        Operations of the mass matrix and forcing alone (with their intermediates),
        per evaluation.
    parts : tuple of str
        Further translation units: the functions a big routine is split into
        (:data:`PART_STATEMENTS` statements each), declared in ``source``; empty for
        small models.
    folded : bool
        Whether parameter values were written into the code.
    jacobian : bool
        Whether ``kidym_jac`` computes the analytic Jacobian (``counts["jacobian"]``
        its operations); otherwise it is a stub.
    """

    source: str
    model_name: str
    state_names: tuple[str, ...]
    parameter_names: tuple[str, ...]
    output_names: tuple[str, ...]
    event_names: tuple[str, ...]
    n_q: int
    n_w: int
    n_constants: int
    counts: dict[str, OpCount]
    mf_counts: OpCount
    folded: bool
    event_directions: tuple[int, ...] = ()
    event_actions: tuple[int, ...] = ()
    options: dict = field(default_factory=dict)
    parts: tuple[str, ...] = ()
    jacobian: bool = False

    @property
    def sources(self) -> tuple[str, ...]:
        """Every translation unit: ``source``, then the parts of big routines."""
        return (self.source, *self.parts)

    def counts_table(self) -> str:
        """The operation counts as a text table."""
        rows = [f"{'routine':<12}{'add':>8}{'mul':>8}{'div':>8}{'fun':>8}{'total':>8}"]
        for name, c in self.counts.items():
            rows.append(f"{name:<12}{c.additions:>8}{c.multiplications:>8}{c.divisions:>8}"
                        f"{c.functions:>8}{c.total:>8}")
        return "\n".join(rows)


#: Statements per function when a routine is split (:meth:`_Emitter.routine`). The
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

#: Largest block of ``M`` solved by straight-line LDLᵀ code (bigger: loops, Cholesky).
UNROLL_MAX = 12


def solve_count(n: int | Sequence[int]) -> OpCount:
    """Operations of the dense (looped) Cholesky solve of :func:`_solve_c`.

    ``n`` is the size of ``M``, or the sizes of its independent diagonal blocks. The
    straight-line LDLᵀ of blocks up to :data:`UNROLL_MAX` counts itself
    (:func:`_solve_ldl`).
    """
    c = OpCount()
    sizes = [n] if isinstance(n, int) else list(n)
    if sizes and max(sizes) == 1:
        c.divisions += len(sizes)   # diagonal M: w'_i = F_i / M_ii
        return c
    for m in sizes:
        for j in range(m):
            c.multiplications += j
            c.additions += j
            c.functions += 1        # sqrt
            c.divisions += 1        # 1/L[j][j]
            for _ in range(j + 1, m):
                c.multiplications += j + 1
                c.additions += j
        for i in range(m):          # forward, then back substitution
            c.multiplications += 2 * i + 2
            c.additions += 2 * i
    return c


def _solve_ldl(n: int, blocks: Sequence[Sequence[int]],
               zero: Callable[[int, int], bool]) -> tuple[str, OpCount]:
    """Straight-line C of ``M ẇ = F`` by ``M = L D Lᵀ``, block by block, and its count.

    No square roots, one division per pivot, constant indices (the compiler keeps the
    factor in registers), and the entries of ``M`` that are zero in the equations
    (``zero(i, j)``) — with the fill-in they cause, followed symbolically — skipped.
    The pivot test is the Cholesky one (``d_j`` is the square of its pivot).
    """
    count = OpCount()
    lines = ["/* M w' = F by M = L D L^T, written out for each independent diagonal block",
             "   of M (speeds that no entry couples); entries of M that are zero in the",
             "   equations, and the fill-in they leave zero, are skipped. F is overwritten",
             "   by w'. Returns 1 if a pivot is not positive (singular or indefinite M). */",
             "static int kd_solve(double *M, double *F) {"]

    def terms(pairs: list[str]) -> str:
        return "".join(f" - {t}" for t in pairs)

    for bi, block in enumerate(blocks):
        m = len(block)
        lines.append(f"    {{   /* block {bi}: speeds {', '.join(map(str, block))} */")

        def mij(i: int, j: int, block: Sequence[int] = block) -> str:  # (i, j), i >= j
            return f"M[{block[j]}*{n}+{block[i]}]"

        nz = [[False] * m for _ in range(m)]  # L[i][j] structurally non-zero (i > j)
        for j in range(m):
            # t{i}_{j} = L[i][j] d[j] is kept unscaled: d[j] and column j need no
            # multiplication by d[k], and L[i][j] = t{i}_{j} / d[j] waits for one division
            prev = [k for k in range(j) if nz[j][k]]
            lines.append(f"        double d{j} = {mij(j, j)}"
                         f"{terms([f'L{j}_{k}*t{j}_{k}' for k in prev])};")
            count.multiplications += len(prev)
            count.additions += len(prev)
            lines.append(f"        if (!(d{j} > {PIVOT_TOLERANCE!r}*fabs({mij(j, j)})) || "
                         f"!(d{j} > 0.0)) return 1;")
            lines.append(f"        double i{j} = 1.0/d{j};")
            count.divisions += 1
            for i in range(j + 1, m):
                common = [k for k in prev if nz[i][k]]
                if zero(block[i], block[j]) and not common:
                    continue
                nz[i][j] = True
                head = "0.0" if zero(block[i], block[j]) else mij(i, j)
                lines.append(f"        double t{i}_{j} = {head}"
                             f"{terms([f'L{i}_{k}*t{j}_{k}' for k in common])};")
                lines.append(f"        double L{i}_{j} = t{i}_{j}*i{j};")
                count.multiplications += len(common) + 1
                count.additions += len(common)
        for i in range(m):                    # L z = F
            prev = [k for k in range(i) if nz[i][k]]
            lines.append(f"        double z{i} = F[{block[i]}]"
                         f"{terms([f'L{i}_{k}*z{k}' for k in prev])};")
            count.multiplications += len(prev)
            count.additions += len(prev)
        for i in reversed(range(m)):          # D Lᵀ x = z
            after = [k for k in range(i + 1, m) if nz[k][i]]
            lines.append(f"        double x{i} = z{i}*i{i}"
                         f"{terms([f'L{k}_{i}*x{k}' for k in after])};")
            count.multiplications += len(after) + 1
            count.additions += len(after)
        for i in range(m):
            lines.append(f"        F[{block[i]}] = x{i};")
        lines.append("    }")
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines), count


def mass_matrix_blocks(eq: Equations) -> list[list[int]]:
    """The independent diagonal blocks of ``M``: speeds coupled by a non-zero entry.

    Entries that are zero in the equations (speeds of different branches of a tree,
    e.g. the two legs of a biped on a fixed pelvis) never couple; each connected set
    of speeds is a block, solved on its own (``n³/6`` operations per block instead
    of for the whole ``M``).
    """
    n = eq.n_w
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if eq.mass_matrix_named[i][j] != 0:
                parent[root(j)] = root(i)
    blocks: dict[int, list[int]] = {}
    for i in range(n):
        blocks.setdefault(root(i), []).append(i)
    return sorted(blocks.values())


def _solve_c(n: int, blocks: Sequence[Sequence[int]]) -> str:
    """C of the Cholesky solve, block by block (:func:`mass_matrix_blocks`).

    A single block is written with direct indices and a constant size: through the
    index table the whole right-hand side of the 3-link chain took 1.4x as long.
    """
    single = len(blocks) == 1
    if max(len(b) for b in blocks) == 1:
        # diagonal M: no factorisation (and no loops over empty factors, which GCC's
        # -Wmaybe-uninitialized flags)
        return f"""\
/* M w' = F for a diagonal M: w'_i = F_i / M_ii. Returns 1 if a diagonal entry is
   not positive (singular or indefinite M). */
static int kd_solve(double *M, double *F) {{
    for (int i = 0; i < {n}; ++i) {{
        double d = M[i*{n}+i];
        if (!(d > 0.0)) return 1;
        F[i] /= d;
    }}
    return 0;
}}
"""

    def ix(v: str) -> str:
        return v if single else f"ix[{v}]"

    m = max(len(b) for b in blocks)
    factor = f"""\
        for (int j = 0; j < nb; ++j) {{
            double d = M[{ix("j")}*{n}+{ix("j")}];
            for (int k = 0; k < j; ++k) d -= L[j][k]*L[j][k];
            if (!(d > {PIVOT_TOLERANCE!r}*fabs(M[{ix("j")}*{n}+{ix("j")}])) || !(d > 0.0)) return 1;
            L[j][j] = sqrt(d);
            inv[j] = 1.0/L[j][j];
            for (int i = j + 1; i < nb; ++i) {{
                double s = M[{ix("j")}*{n}+{ix("i")}];
                for (int k = 0; k < j; ++k) s -= L[i][k]*L[j][k];
                L[i][j] = s*inv[j];
            }}
        }}
        for (int i = 0; i < nb; ++i) {{
            double s = F[{ix("i")}];
            for (int k = 0; k < i; ++k) s -= L[i][k]*x[k];
            x[i] = s*inv[i];
        }}
        for (int i = nb - 1; i >= 0; --i) {{
            double s = x[i];
            for (int k = i + 1; k < nb; ++k) s -= L[k][i]*x[k];
            x[i] = s*inv[i];
        }}
        for (int i = 0; i < nb; ++i) F[{ix("i")}] = x[i];
"""
    if single:
        head = f"    {{\n        const int nb = {n};\n"
        tables = ""
    else:
        starts = [0]
        for b in blocks:
            starts.append(starts[-1] + len(b))
        index = ", ".join(str(i) for b in blocks for i in b)
        tables = (f"static const int kd_block_start[{len(blocks) + 1}] = "
                  f"{{{', '.join(map(str, starts))}}};\n"
                  f"static const int kd_block_index[{n}] = {{{index}}};\n")
        head = (f"    for (int B = 0; B < {len(blocks)}; ++B) {{\n"
                "        const int *ix = kd_block_index + kd_block_start[B];\n"
                "        const int nb = kd_block_start[B + 1] - kd_block_start[B];\n")
    return f"""\
/* M w' = F by Cholesky M = L L^T (M symmetric positive definite) of each of the
   {len(blocks)} independent diagonal block(s) of M (speeds that no entry of M couples);
   F is overwritten by w'. Returns 1 if a pivot is not positive (singular or
   indefinite M). */
{tables}static int kd_solve(double *M, double *F) {{
    double L[{m}][{m}], inv[{m}], x[{m}];
{head}{factor}    }}
    return 0;
}}
"""


def _exact(value: float) -> Expr:
    f = Fraction(value)
    return se.Integer(f.numerator) if f.denominator == 1 else se.Rational(f.numerator,
                                                                          f.denominator)


class _Emitter:
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

    # --------------------------------------------------------------- naming
    def name_of(self, s: se.Symbol) -> str:
        if s in self.inputs:
            return self.inputs[s]
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
                   | set(self.acceleration_index) | set(self.inputs))
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
        if split is not None and len(lines) > max(SPLIT_ABOVE, PART_STATEMENTS):
            calls = self._split(split, [s for s, _, _ in lines], uses, text,
                                given={s: f"ydot[{i}]" for s, i in accelerations.items()})
            self.temp_names = {}
            return (solve + calls if accelerations else calls), count
        head = self._states(used, indent)
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
                _UNUSED + " (void)w;"
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


def _header(eq: Equations, code_counts: dict[str, OpCount], mf: OpCount, layout: list[str],
            options: dict) -> str:
    src = eq.model.source or ""
    digest = hashlib.sha256(src.encode("utf-8")).hexdigest()[:16]
    lines = ["/* generated by kidym, do not edit.",
             f" * model: {comment_text(eq.model.name)}  (model source sha256 {digest})",
             f" * options: {', '.join(f'{k}={v}' for k, v in options.items())}",
             *(f" * {x}" for x in layout),
             " *",
             " * operations per call    add     mul     div     fun"]
    for name, c in code_counts.items():
        lines.append(f" *   {name:<18}{c.additions:>7}{c.multiplications:>8}"
                     f"{c.divisions:>8}{c.functions:>8}")
    lines.append(f" *   {'(M and F only)':<18}{mf.additions:>7}{mf.multiplications:>8}"
                 f"{mf.divisions:>8}{mf.functions:>8}")
    lines.append(" */")
    return "\n".join(lines) + "\n"


def _layout_comment(what: str, names: Sequence[str]) -> list[str]:
    if not names:
        return [f"{what}: (none)"]
    out, line = [], f"{what}:"
    for i, n in enumerate(names):
        item = f" [{i}] {comment_text(n)}"
        if len(line) + len(item) > 90:
            out.append(line)
            line = "   "
        line += item
    out.append(line)
    return out


def generate_c(eq: Equations, *, outputs: Mapping[str, Expr] | None = None,
               events: Sequence[Event] = (), fold: bool | Mapping[str, float] = False,
               cse: bool = True, hoist: bool = True, jacobian: bool = False) -> CCode:
    """Generate the C source of ``eq``.

    Parameters
    ----------
    eq : Equations
        Derived equations (``q̇ = B w + β``, ``M ẇ = F``, seed 000 eq. (18)).
    outputs : mapping of str to Expr, optional
        Recorded outputs; default the model's outputs, ``energy`` and its rate along the
        motion ``energy't`` (:attr:`Equations.power_named`, for the energy balance).
    events : sequence of Event
        Event functions and their reset maps, after the model's own (``СОБЫТИЯ``,
        :attr:`Equations.events_named`).
    fold : bool or mapping of str to float
        Write the model's parameter values (updated by the mapping, if one is given)
        into the code instead of reading the runtime vector ``p``.
    cse : bool
        Eliminate common subexpressions (default).
    hoist : bool
        Compute parameter-only quantities once per parameter vector (default).
    jacobian : bool
        Also generate the analytic Jacobian ``kidym_jac`` (:mod:`kidym.codegen.jacobian_c`),
        which CVODE's ``BDF`` then uses instead of difference quotients. Off by default:
        it adds ``n_y`` derivatives of every entry of ``q̇``, ``M`` and ``F`` to the code.

    Returns
    -------
    CCode
        The source, layouts and operation counts per routine.

    Raises
    ------
    ValueError
        If an event or reset names something the model does not have.
    """
    eq.require_motion()
    if jacobian and eq.controls is not None:
        raise ValueError("no analytic Jacobian for a model with controls (the controls' "
                         "solve is not differentiated): CVODE's BDF forms it by difference "
                         "quotients (jacobian='fd')")
    if outputs is None:
        outputs = dict(eq.outputs_named)
        if "energy" not in outputs:   # (a model's own `energy` has its own `energy't`)
            outputs["energy"] = eq.energy_named
            outputs.setdefault("energy't", eq.power_named)   # for the energy balance
    n_q, n_w = eq.n_q, eq.n_w
    ny = n_q + n_w
    state_names = tuple(str(s) for s in (*eq.coordinates, *eq.speeds))
    em = _Emitter(eq, fold=fold, cse=cse, hoist=hoist)

    # M and F alone, for the operation count the seed reports (Table 1)
    upper = [(i, j) for i in range(n_w) for j in range(i, n_w)]
    mf_roots = [eq.mass_matrix_named[i][j] for i, j in upper] + list(eq.forcing_named)
    _, mf_count = _Emitter(eq, fold=fold, cse=cse, hoist=hoist).routine(
        mf_roots, [f"x[{k}]" for k in range(len(mf_roots))])

    # F, then with constraints their block γ, Φ, c, G (Equations.forcing_extended)
    forcing = eq.forcing_extended
    roots = [*eq.qdot, *(eq.mass_matrix_named[i][j] for i, j in upper), *forcing]
    targets = ([f"qdot[{i}]" for i in range(n_q)]
               + [f"M[{i * n_w + j}]" for i, j in upper]
               + [f"F[{i}]" for i in range(len(forcing))])
    rhs_lines, rhs_count = em.routine(
        roots, targets, split=("kidym_rhs_part", "double *qdot, double *M, double *F",
                               "qdot, M, F"))
    # M's lower triangle: the solve of M w' = F reads the upper one, so only kidym_eval
    # fills it in; the augmented solve of a constrained model reads all of M
    mirror = ("    for (int i = 0; i < KIDYM_NW; ++i)\n"
              "        for (int j = i + 1; j < KIDYM_NW; ++j) "
              "M[j*KIDYM_NW + i] = M[i*KIDYM_NW + j];\n")
    full = eq.constraints is not None or eq.controls is not None   # solves read all of M
    if full:
        rhs_lines.append(mirror.rstrip("\n"))

    out_lines, out_count = em.routine(list(outputs.values()),
                                      [f"out[{k}]" for k in range(len(outputs))],
                                      split=("kidym_out_part", "double *out", "out"))

    events = all_events(eq, events)
    ev_names = tuple(e.name or f"event{k}" for k, e in enumerate(events))
    ev_exprs = [parse_expression(eq, e.function, f"event `{n}`")
                for e, n in zip(events, ev_names)]
    ev_lines, ev_count = em.routine(ev_exprs, [f"g[{k}]" for k in range(len(events))])

    reset_lines: list[str] = []
    reset_count = OpCount()
    for k, (e, n) in enumerate(zip(events, ev_names)):
        if not e.reset:
            continue
        idx, exprs = [], []
        for name, value in e.reset.items():
            if name not in state_names:
                raise ValueError(f"event `{n}` resets `{name}`, which is not a state; the "
                                 "state is " + ", ".join(state_names))
            idx.append(state_names.index(name))
            exprs.append(parse_expression(eq, value, f"reset of `{name}` at event `{n}`"))
        lines, cnt = em.routine(exprs, [f"ynew[{i}]" for i in idx], indent="        ")
        reset_count = reset_count + cnt
        reset_lines += [f"    case {k}: {{", *lines, "        break;", "    }"]

    jac_lines: list[str] | None = None
    if jacobian:
        d_roots, d_targets, em.inputs = jacobian_roots(eq)
        jac_lines, jac_count = em.routine(
            d_roots, d_targets, split=("kidym_jac_part",
                                       "const double *kd_x, double *kd_J, double *kd_col",
                                       "kd_x, kd_J, kd_col"))
        em.inputs = {}
    const_lines, const_count = em.constants_routine()
    blocks = mass_matrix_blocks(eq)
    if 1 < max(len(b) for b in blocks) <= UNROLL_MAX:
        solve_src, solve_ops = _solve_ldl(
            n_w, blocks, lambda i, j: eq.mass_matrix_named[min(i, j)][max(i, j)] == 0)
    else:
        solve_src, solve_ops = _solve_c(n_w, blocks), solve_count([len(b) for b in blocks])
    counts = {"constants": const_count, "rhs": rhs_count, "solve": solve_ops,
              "outputs": out_count, "events": ev_count, "resets": reset_count}
    if jacobian:
        counts["jacobian"] = jac_count
    directions = tuple(e.direction for e in events)
    actions = tuple(1 if e.terminal else (2 if e.reset else 0) for e in events)
    options = {"fold": bool(fold), "cse": cse, "hoist": hoist}
    if jacobian:
        options["jacobian"] = True
    layout = (_layout_comment(f"y[{ny}] = q, w", state_names)
              + _layout_comment(f"p[{len(em.params)}] (parameters)"
                                + (", folded into the code" if fold else ""),
                                [str(s) for s in em.params])
              + _layout_comment(f"out[{len(outputs)}]", list(outputs))
              + _layout_comment(f"g[{len(events)}] (events)", ev_names))
    n_c = len(em.const_index)

    def arr(values: Sequence[int]) -> str:
        return "{" + ", ".join(str(v) for v in (values or (0,))) + "}"

    src = [_header(eq, counts, mf_count, layout, options),
           "#include <math.h>\n" + ("#include <stdlib.h>\n" if jacobian else ""),
           f"#define KIDYM_NQ {n_q}\n#define KIDYM_NW {n_w}\n#define KIDYM_NY {ny}\n"
           f"#define KIDYM_NP {len(em.params)}\n#define KIDYM_NC {n_c}\n"
           f"#define KIDYM_NOUT {len(outputs)}\n#define KIDYM_NEV {len(events)}\n",
           _HELPERS,
           *(f"void {name}(double t, const double *y, const double *p, const double *c, "
             f"double *w, {decl});" for name, decl in em.part_names),
           f"const int kidym_abi = {ABI_VERSION};",
           "const int kidym_layout[7] = {KIDYM_NQ, KIDYM_NW, KIDYM_NY, KIDYM_NP, KIDYM_NC, "
           "KIDYM_NOUT, KIDYM_NEV};",
           f"const int kidym_event_direction[] = {arr(directions)};",
           f"const int kidym_event_action[] = {arr(actions)};  "
           "/* 0 record, 1 terminal, 2 reset */\n",
           "void kidym_constants(const double *p, double *c) {",
           "    (void)p; (void)c;", *const_lines, "}\n",
           "static inline void kd_eval(double t, const double *y, const double *p, "
           "const double *c,\n                           double *qdot, double *M, double *F) {",
           _UNUSED, *rhs_lines, "}\n",
           "void kidym_eval(double t, const double *y, const double *p, const double *c,\n"
           "                double *qdot, double *M, double *F) {\n"
           "    kd_eval(t, y, p, c, qdot, M, F);\n"
           + ("" if full else mirror) + "}\n",
           solve_src if not full else "",   # (the augmented or the controls' solve instead)
           constraint_source(eq),
           controls_source(eq),
           jacobian_source(eq, jac_lines),
           "int kidym_rhs(double t, const double *y, const double *p, const double *c, "
           "double *ydot) {",
           f"    double M[{n_w * n_w}], F[{len(forcing)}];",
           "    kd_eval(t, y, p, c, ydot, M, F);",
           "    if (kd_constrained(M, F)) return 1;" if eq.constraints is not None
           else "    if (kd_controlled(M, F)) return 1;" if eq.controls is not None
           else "    if (kd_solve(M, F)) return 1;",
           "    int finite = 1;",
           f"    for (int i = 0; i < {n_w}; ++i) ydot[{n_q} + i] = F[i];",
           f"    for (int i = 0; i < {ny}; ++i) finite &= isfinite(ydot[i]) != 0;",
           "    return finite ? 0 : 2;", "}\n",
           "void kidym_outputs(double t, const double *y, const double *p, const double *c, "
           "double *out) {", _UNUSED + " (void)out;", *out_lines, "}\n",
           "void kidym_events(double t, const double *y, const double *p, const double *c, "
           "double *g) {", _UNUSED + " (void)g;", *ev_lines, "}\n",
           "void kidym_reset(int k, double t, const double *y, const double *p, "
           "const double *c, double *ynew) {",
           _UNUSED,
           f"    for (int i = 0; i < {ny}; ++i) ynew[i] = y[i];",
           "    switch (k) {", *reset_lines, "    default: break;", "    }", "}\n"]
    preamble = ("/* generated by kidym, do not edit: a part of the model's routines */\n"
                "#include <math.h>\n" + _HELPERS)
    parts = tuple(f"{preamble}\n{part}" for part in em.parts)
    return CCode(source="\n".join(src), model_name=eq.model.name, state_names=state_names,
                 parts=parts,
                 parameter_names=tuple(str(s) for s in em.params),
                 output_names=tuple(outputs), event_names=ev_names, n_q=n_q, n_w=n_w,
                 n_constants=n_c, counts=counts, mf_counts=mf_count, folded=bool(fold),
                 event_directions=directions, event_actions=actions, options=options,
                 jacobian=jacobian)
