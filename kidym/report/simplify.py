"""Simplification of expanded expressions within a time budget.

SymPy's ``simplify`` (trigonometric identities included) can take minutes on an
expression of a few thousand operations and cannot be interrupted from the same
thread. So the work runs in a forked child process that sends each simplified
expression back as soon as it is done; when the budget is spent the child is
stopped, the expressions not reached are kept as they are, and a warning says so.
Expressions above ``max_ops`` operations are not even tried (a warning again):
expanding a big model is the blow-up kidym's structural form avoids.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence

import sympy

#: Expressions with more operations than this are printed unsimplified.
SIMPLIFY_MAX_OPS = 400


def _simplify_one(expr: sympy.Expr) -> sympy.Expr:
    out = sympy.simplify(expr)
    return out if sympy.count_ops(out) <= sympy.count_ops(expr) else expr


def _child(conn, exprs: Sequence[sympy.Expr], todo: Sequence[int]) -> None:  # pragma: no cover
    for i in todo:
        conn.send((i, _simplify_one(exprs[i])))
    conn.close()


def simplify_with_budget(exprs: Sequence[sympy.Expr], budget_s: float = 10.0, *,
                         max_ops: int = SIMPLIFY_MAX_OPS
                         ) -> tuple[list[sympy.Expr], list[str]]:
    """Simplify ``exprs`` with at most ``budget_s`` seconds of work in all.

    Parameters
    ----------
    exprs : sequence of sympy.Expr
        Expressions to simplify (``sympy.simplify``: trigonometric, rational, powers).
    budget_s : float
        Wall-time budget for all of them; ``0`` leaves them as they are.
    max_ops : int
        Expressions with more operations are kept as they are.

    Returns
    -------
    simplified : list of sympy.Expr
        The same length as ``exprs``; an expression is replaced only by an equal,
        not longer one.
    warnings : list of str
        What was left unsimplified and why.
    """
    out = list(exprs)
    warnings: list[str] = []
    big = [i for i, e in enumerate(exprs) if sympy.count_ops(e) > max_ops]
    if big:
        warnings.append(f"{len(big)} of {len(exprs)} expanded expressions have more than "
                        f"{max_ops} operations and are printed unsimplified")
    todo = [i for i in range(len(exprs)) if i not in set(big)]
    if not todo or budget_s <= 0:
        return out, warnings
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, list(exprs), todo), daemon=True)
    proc.start()
    child.close()
    deadline = time.monotonic() + budget_s
    done = 0
    try:
        while done < len(todo):
            left = deadline - time.monotonic()
            if left <= 0 or not parent.poll(left):
                break
            try:
                i, value = parent.recv()
            except EOFError:
                break
            out[i] = value
            done += 1
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join(timeout=5)
        parent.close()
    if done < len(todo):
        warnings.append(f"simplification stopped after its budget of {budget_s:g} s: "
                        f"{len(todo) - done} of {len(exprs)} expanded expressions are "
                        "printed unsimplified (raise --simplify-budget to wait longer)")
    return out, warnings
