"""The solve of ``M ẇ = F`` in the generated C: ``L D Lᵀ`` or Cholesky, block by block.

``M`` is symmetric positive definite; a non-positive pivot is reported as a singular
mass matrix. Its independent diagonal blocks (:func:`mass_matrix_blocks`) are solved
apart: up to :data:`UNROLL_MAX` speeds by straight-line ``L D Lᵀ`` code
(:func:`solve_ldl`), bigger ones by looped Cholesky (:func:`solve_c`, counted by
:func:`solve_count`), a diagonal ``M`` by one division per speed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kidym.codegen.cprint import OpCount
from kidym.eom.equations import Equations

#: Relative pivot below which the mass matrix is called singular.
PIVOT_TOLERANCE = 1e-13

#: Largest block of ``M`` solved by straight-line LDLᵀ code (bigger: loops, Cholesky).
UNROLL_MAX = 12


def solve_count(n: int | Sequence[int]) -> OpCount:
    """Operations of the dense (looped) Cholesky solve of :func:`solve_c`.

    ``n`` is the size of ``M``, or the sizes of its independent diagonal blocks. The
    straight-line LDLᵀ of blocks up to :data:`UNROLL_MAX` counts itself
    (:func:`solve_ldl`).
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


def solve_ldl(n: int, blocks: Sequence[Sequence[int]],
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


def solve_c(n: int, blocks: Sequence[Sequence[int]]) -> str:
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

