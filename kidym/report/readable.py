"""Readable names of the named quantities: ``agXRod2#1`` printed ``a_x(Rod2)⁽¹⁾``.

The equations keep their internal names (they feed the generated C, the cache and the
tests); this module maps them at printing time. A name is read by its structure
(``kidym/kinematics/bodies.py``, ``kidym/eom/composite.py``, ``structural.py``,
``two_stage.py``, ``constraints.py`` … make them) into a small tree, which is written
as text and as LaTeX:

* a quantity of a frame is a letter, its component and the frame:
  ``ω_z(Rod2)`` (``ωZRod2``), ``v_y(Rod2)`` (``vYRod2``), ``S_21(Rod2)``,
  ``X_O(Rod2)``, ``X_C(Rod2)`` (the mass centre: ``XOCRod2``, or the model's
  ``XCRod2``); components on the frame's own axes
  in lower case, on the fixed axes in capitals;
* the frame is a body's name; marks after it say which frame of the body:
  ``⁽ᵏ⁾`` the frame after the k-th step of the body's transform chain (consecutive
  shifts count as one step; ``⁽¹⁾`` after a first shift is the parent's axes at the
  joint), ``ᶜ`` the body's central frame (mass centre, central axes), ``⁽Λ⁾`` the
  frame the quaternion turns, ``ᴾ`` principal axes;
* composite bodies (``docs/theory.md``): ``I_zz(F)``, ``h_x(F)``, ``m(F)`` the
  inertia, first moment and mass of everything below frame ``F``; ``f_x(F)``,
  ``n_x(F)`` the force and moment of their ``Q`` and ``τ`` at ``F``;
* a partial derivative by a speed or coordinate ``w`` is ``(∂X/∂w)`` (``vYRod2'phi1't``
  → ``(∂v_y(Rod2)/∂phi1't)``, in parentheses so that a power reads right); a time
  derivative of a generated quantity carries a dot on its letter (``ω̇_x(Rod2)``), of
  a name of several letters a dot after the parenthesis (``(cos_q1)˙``), of a name of
  the model the model's own ``'t``;
* names of the model (coordinates, speeds, parameters, definitions) are printed as
  the model writes them.

:class:`NameTable` holds the printed names of one set of equations, made unique
(a second quantity that would print alike gets ``~2``) and the legend of the kinds
used. Names of the model reach LaTeX through :func:`kidym.report.names.latex_name`
only (escaped there).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from kidym.report.names import latex_name

_SUPER = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_DOT, _DDOT = "\u0307", "\u0308"


# ---------------------------------------------------------------------- legend
#: kind → (text key, LaTeX key, what it is); printed for the kinds a set of equations uses
LEGEND: dict[str, tuple[str, str, str]] = {
    "frame": ("(B)", r"(B)", "of the frame of body B (the end of its transform chain)"),
    "stage": ("(B)⁽ᵏ⁾", r"(B)^{(k)}",
              "of the frame after step k of B's chain (shifts in a row: one step; ⁽⁰⁾: "
              "before B's quaternion turns it)"),
    "central": ("(B)ᶜ", r"(B)^{C}", "of B's central frame (mass centre, central axes)"),
    "quat": ("(B)⁽Λ⁾", r"(B)^{(\Lambda)}", "of the frame B's quaternion turns"),
    "principal": ("(B)ᴾ", r"(B)^{P}", "on B's principal axes of inertia"),
    "fixed": ("(0)", r"(0)", "of the fixed frame"),
    "axes": ("_x, _X", r"_{x}, _{X}",
             "components on the frame's own axes (lower case) or on the fixed axes "
             "(capitals)"),
    "S": ("S_ij(F)", r"S_{ij}(F)", "rotation matrix fixed ← F (column j: F's axis j)"),
    "origin": ("X_O(F)", r"X_{O}(F)", "origin of F in the fixed frame"),
    "centre": ("X_C(B)", r"X_{C}(B)", "mass centre of B in the fixed frame"),
    "ω": ("ω_x(F)", r"\omega_{x}(F)", "angular velocity of F"),
    "ε": ("ε_x(F)", r"\varepsilon_{x}(F)",
          "angular acceleration of F at ẇ = 0 (its velocity-product part)"),
    "v": ("v_x(F)", r"v_{x}(F)", "velocity of F's origin"),
    "a0": ("a⁰_x(F)", r"a^{0}_{x}(F)",
           "acceleration of F's origin at ẇ = 0 (its velocity-product part)"),
    "ag": ("a_x(F)", r"a_{x}(F)",
           "acceleration of F's origin at ẇ = 0 less gravity, a⁰ − Sᵀg (gravity enters "
           "as the fixed frame's acceleration −g)"),
    "angle": ("θ(F)", r"\theta(F)", "the angle of the turn that makes frame F"),
    "trig": ("cos_x, sin_x", r"\cos x, \sin x", "cos x and sin x, computed once"),
    "norm": ("|Λ|²(F)", r"|\Lambda|^{2}(F)", "squared norm of the quaternion of F"),
    "Q": ("Q_x(B)", r"Q_{x}(B)", "m (Sᵀg − a⁰) of body B on its central axes"),
    "τ": ("τ_x(B)", r"\tau_{x}(B)", "J ε⁰ + ω × J ω of body B"),
    "Jω": ("(Jω)_x(B)", r"(J\omega)_{x}(B)", "J ω of body B"),
    "I": ("I_xy(F)", r"I_{xy}(F)",
          "composite inertia tensor about F's origin of all bodies below frame F"),
    "m": ("m(F)", r"m(F)", "composite mass below F"),
    "h": ("h_x(F)", r"h_{x}(F)", "composite first moment (mass × centre) below F"),
    "f": ("f_x(F)", r"f_{x}(F)", "composite force below F (sum of Q)"),
    "n": ("n_x(F)", r"n_{x}(F)", "composite moment about F's origin below F (of Q and −τ)"),
    "Δ": ("Δω_x(F), Δv_x(F)", r"\Delta\omega_{x}(F), \Delta v_{x}(F)",
          "what the step to F adds to the angular velocity and velocity"),
    "H": ("H_x(F), L_x(F)", r"H_{x}(F), L_{x}(F)",
          "angular and linear momentum below F (∂…/∂w: of a speed's unit motion)"),
    "MB": ("MB[q,w]", r"(M_{hol}B)_{q,w}",
           "row q, column w of M_hol·B (seed 000's second stage, U = Bᵀ U_hol)"),
    "Fhol": ("F_hol[q]", r"F_{hol,q}", "holonomic forcing of q less M_hol·(dB/dt w + β̇)"),
    "γ": ("γ[f]", r"\gamma_{f}", "right-hand side of constraint f on the accelerations"),
    "b": ("b[c]", r"b_{c}", "right-hand side of programmed constraint c"),
    "V": ("V[c], P[c]", r"V_{c}, P_{c}", "potential and force of virtual constraint c"),
    "gate": ("c⁻", r"c^{-}", "virtual bound c where it is violated (c < 0), else 0"),
    "contact": ("s(B), v_n(B), d(B), dX(B), ∇f_X(B), |∇f|(B)",
                r"s(B), v_{n}(B), d(B)",
                "rolling contact of B: length of the axis' horizontal part (disc), "
                "normal velocity, distance and offset from the sphere's centre, the "
                "surface's gradient and its length"),
    "Λ": ("Λ_k", r"\Lambda_{k}", "component k of the quaternion the angles are read from"),
    "partial": ("(∂X/∂w)", r"\partial_{w}X", "partial derivative of X by w"),
    "rate": ("Ẋ, (X)˙", r"\dot X",
             "time derivative (of a name of the model: its 't; of a name of several "
             "letters: the dot after the parenthesis)"),
    "u0": ("X|u=0", r"X|_{u=0}", "X with the controls set to zero"),
    "tilde": ("X~k", r"X_{\sim k}",
              "a k-th quantity that would print as X (two-stage: X of the first stage "
              "in the final speeds)"),
}


# ---------------------------------------------------------------- the tree
@dataclass(frozen=True)
class Printed:
    """A name as printed: ``text``, ``latex``, the legend ``kinds`` it uses."""

    text: str
    latex: str
    kinds: frozenset[str] = frozenset()
    #: a letter that takes a dot for a time derivative (else ``d/dt``)
    dottable: bool = False
    #: a name of the model, printed as written
    user: bool = False


def _frame_marks(central: bool, mark: str) -> tuple[str, str]:
    text, tex = "", []
    if central:
        text += "ᶜ"
        tex.append("C")
    if mark == "q":
        text += "⁽Λ⁾"
        tex.append(r"(\Lambda)")
    elif mark:
        text += f"⁽{mark.translate(_SUPER)}⁾"
        tex.append(f"({mark})")
    return text, ("^{" + ",".join(tex) + "}" if tex else "")


@dataclass(frozen=True)
class _Frame:
    body: str
    central: bool = False
    mark: str = ""          # "", a stage number, "q", "λ"

    def kinds(self) -> set[str]:
        """The legend's kinds this frame's marks use."""
        if self.body == "0":
            return {"fixed"}
        out = {"frame"} | ({"central"} if self.central else set())
        if self.mark == "q":
            out.add("quat")
        elif self.mark and self.mark != "λ":
            out.add("stage")
        return out

    def text(self) -> str:
        marks, _ = _frame_marks(self.central, self.mark if self.mark != "λ" else "")
        return f"({self.body}){marks}"

    def latex(self) -> str:
        _, marks = _frame_marks(self.central, self.mark if self.mark != "λ" else "")
        body = "0" if self.body == "0" else latex_name(self.body)
        return rf"\left({body}\right){marks}"


def _quantity(head: str, head_tex: str, sub: str, frame: _Frame | None, kind: str,
              *, sub_tex: str | None = None) -> Printed:
    text = head + (f"_{sub}" if sub else "") + (frame.text() if frame else "")
    st = sub if sub_tex is None else sub_tex
    tex = (f"{{{head_tex}}}" + (f"_{{{st}}}" if st else "")
           + (frame.latex() if frame else ""))
    kinds = {kind} | (frame.kinds() if frame else set()) | ({"axes"} if sub else set())
    return Printed(text, tex, frozenset(kinds), dottable=len(head) == 1)


def _centre(axis: str, body: str) -> Printed:
    """``X_C(B)``: its legend line says all (no frame or axes line needed)."""
    p = _quantity(axis, axis, "C", _Frame(body), "centre")
    return Printed(p.text, p.latex, frozenset({"centre"}), dottable=True)


def _rate(p: Printed, n: int = 1) -> Printed:
    if p.user:
        return Printed(p.text + "'t" * n, latex_name(p.text + "'t" * n), p.kinds, user=True)
    if p.dottable and n <= 2:   # (NFC: Ẍ as one character where Unicode has one)
        text = unicodedata.normalize("NFC", p.text[0] + (_DOT if n == 1 else _DDOT)) + p.text[1:]
        accent = r"\dot" if n == 1 else r"\ddot"
        m = re.match(r"\{(.*?)\}(.*)$", p.latex)
        tex = (f"{accent}{{{m.group(1)}}}{m.group(2)}" if m
               else rf"{accent}{{{p.latex}}}")
        return Printed(text, tex, p.kinds | {"rate"}, dottable=False)
    text, tex = p.text, p.latex
    for _ in range(n):   # (a name of several letters: the dot over the parenthesis)
        text, tex = f"({text})˙", rf"\tfrac{{d}}{{dt}}\left({tex}\right)"
    return Printed(text, tex, p.kinds | {"rate"})


def _partial(p: Printed, by: str) -> Printed:
    # in parentheses, so that a power reads right: (∂v_x(Rod2)/∂phi1't)**2
    return Printed(f"(∂{p.text}/∂{by})", rf"{{\partial_{{{latex_name(by)}}}{p.latex}}}",
                   p.kinds | {"partial"})


# ------------------------------------------------------------------ reading
_AXIS = {"X": "x", "Y": "y", "Z": "z"}
#: prefix, axis written after it → (letter, LaTeX letter, kind); longest prefixes first
_VECTORS: list[tuple[str, str, str, str]] = [
    ("ag", "a", "a", "ag"), ("ωP", "ω", r"\omega", "ω"), ("εP", "ε", r"\varepsilon", "ε"),
    ("JΩ", "(Jω)", r"(J\omega)", "Jω"), ("ΔΩ", "Δω", r"\Delta\omega", "Δ"),
    ("ΔV", "Δv", r"\Delta v", "Δ"), ("Hc", "H", "H", "H"), ("Lc", "L", "L", "H"),
    ("fc", "f", "f", "f"), ("nc", "n", "n", "n"), ("hc", "h", "h", "h"),
    ("ω", "ω", r"\omega", "ω"), ("ε", "ε", r"\varepsilon", "ε"), ("v", "v", "v", "v"),
    ("a", "a⁰", "a^{0}", "a0"), ("τ", "τ", r"\tau", "τ"), ("Q", "Q", "Q", "Q"),
]
_TRIG = re.compile(r"^(cos|sin)(.+)$")
_TILDE = re.compile(r"^(.+)~(\d+)$")
_STAGE = re.compile(r"^(.+)#(\d+|q|λ)$")


@dataclass
class NameTable:
    """Printed names of the named quantities of one set of equations.

    Parameters
    ----------
    bodies : iterable of str
        The model's bodies.
    states : iterable of str
        Coordinates, speeds and coordinate rates (``q't``): what a partial derivative
        is taken by.
    users : iterable of str
        Names of the model (printed as written): states, parameters, definitions,
        constraints, controls.
    known : iterable of str
        Every named quantity of the graph (to tell ``X't`` a rate from a partial).
    coordinates, speeds : iterable of str
        For ``MB[q, w]`` and ``F_hol[q]``.
    constraints, programmed, virtual : iterable of str
        Names of the constraints, programmed and virtual constraints.
    """

    bodies: Iterable[str]
    states: Iterable[str]
    users: Iterable[str]
    known: Iterable[str] = field(default=(), repr=False)
    coordinates: Iterable[str] = ()
    speeds: Iterable[str] = ()
    constraints: Iterable[str] = ()
    programmed: Iterable[str] = ()
    virtual: Iterable[str] = ()
    _memo: dict[str, Printed] = field(default_factory=dict, repr=False)
    _unique: dict[str, Printed] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.bodies = set(self.bodies)
        self.states = sorted(set(self.states), key=len, reverse=True)
        self.users = set(self.users)
        self.known = set(self.known) | self.users
        self.coordinates = set(self.coordinates)
        self.speeds = sorted(set(self.speeds), key=len, reverse=True)
        self.constraints = set(self.constraints)
        self.programmed = set(self.programmed)
        self.virtual = set(self.virtual)

    # -------------------------------------------------------------- frames
    def frame(self, label: str) -> _Frame | None:
        """The frame a label names (``Rod2#1``, ``CRod2``, ``Body#q``), or ``None``."""
        if label == "0":
            return _Frame("0")
        mark = ""
        m = _STAGE.match(label)
        if m:
            label, mark = m.groups()
        if label in self.bodies:
            return _Frame(label, False, mark)
        if label.startswith("C") and label[1:] in self.bodies:
            return _Frame(label[1:], True, mark)
        return None

    # ------------------------------------------------------------- reading
    def printed(self, name: str) -> Printed:
        """How ``name`` is printed (before the names of a set are made unique)."""
        if name not in self._memo:
            self._memo[name] = self._read(name)
        return self._memo[name]

    def _read(self, name: str) -> Printed:
        if name in self.users:
            return Printed(name, latex_name(name, self.states), user=True)
        m = _TILDE.match(name)
        if m:
            p = self.printed(m.group(1))
            return Printed(f"{p.text}~{m.group(2)}", rf"{p.latex}{{}}_{{\sim {m.group(2)}}}",
                           p.kinds | {"tilde"})
        if name.endswith("⁻") and name[:-1] in self.virtual:
            return Printed(name, rf"{{{latex_name(name[:-1])}}}^{{-}}", frozenset({"gate"}))
        if name.endswith("|u=0"):
            p = self.printed(name[:-4])
            return Printed(p.text + "|u=0", rf"\left.{p.latex}\right|_{{u=0}}",
                           p.kinds | {"u0"})
        if name.startswith("MB"):
            for w in self.speeds:
                q = name[2:-len(w) - 1]
                if name.endswith("'" + w) and q in self.coordinates:
                    return Printed(f"MB[{q},{w}]", rf"(M_{{hol}}B)_{{{latex_name(q)},"
                                   rf"{latex_name(w, self.states)}}}", frozenset({"MB"}))
        if name.endswith("'t") and name[:-2] in self.known:
            return _rate(self.printed(name[:-2]))
        for w in self.states:
            if name.endswith("'" + w) and len(name) > len(w) + 1:
                return _partial(self.printed(name[:-len(w) - 1]), w)
        if name.endswith("'t"):
            base = name[:-2]
            f = self.frame(base)
            if f is not None:
                return _rate(_quantity("θ", r"\theta", "", f, "angle"))
            return _rate(self.printed(base))
        return self._generated(name) or self._fallback(name)

    def _generated(self, name: str) -> Printed | None:
        m = re.match(r"^S([123])([123])(.+)$", name)
        if m and (f := self.frame(m.group(3))) is not None:
            return _quantity("S", "S", m.group(1) + m.group(2), f, "S")
        m = re.match(r"^([XYZ])O(.+)$", name)
        if m and (f := self.frame(m.group(2))) is not None:
            if f.central and not f.mark:
                return _centre(m.group(1), f.body)
            return _quantity(m.group(1), m.group(1), "O", f, "origin")
        m = re.match(r"^([XYZ])C(.+)$", name)   # the model's XCBody (names.CENTRE)
        if m and m.group(2) in self.bodies:
            return _centre(m.group(1), m.group(2))
        m = re.match(r"^Ic([XYZ])([XYZ])(.+)$", name)
        if m and (f := self.frame(m.group(3))) is not None:
            return _quantity("I", "I", _AXIS[m.group(1)] + _AXIS[m.group(2)], f, "I")
        if name.startswith("mc") and (f := self.frame(name[2:])) is not None:
            return _quantity("m", "m", "", f, "m")
        for prefix, head, head_tex, kind in _VECTORS:
            if not name.startswith(prefix) or len(name) < len(prefix) + 2:
                continue
            axis, label = name[len(prefix)], name[len(prefix) + 1:]
            if axis not in _AXIS:
                continue
            f = self.frame(label)
            if f is None:
                continue
            sub = axis if f.mark == "λ" else _AXIS[axis]   # (ω on the fixed axes)
            if prefix in ("ωP", "εP", "JΩ", "τ", "Q") and f.mark not in ("", "λ"):
                continue
            if prefix in ("ωP", "εP"):
                f = _Frame(f.body, False, "")
                p = _quantity(head, head_tex, sub, f, kind)
                return Printed(p.text + "ᴾ", p.latex + "^{P}", p.kinds | {"principal"},
                               dottable=True)
            return _quantity(head, head_tex, sub, f, kind)
        m = _TRIG.match(name)
        if m:
            fn, tag = m.groups()
            if tag in self.users:
                return Printed(f"{fn}_{tag}", rf"\{fn}{{{latex_name(tag)}}}",
                               frozenset({"trig"}))
            f = self.frame(tag)
            if f is not None:
                return Printed(f"{fn}_θ{f.text()}", rf"\{fn}\theta{f.latex()}",
                               frozenset({"trig", "angle"} | f.kinds()))
        if name.startswith("n") and (f := self.frame(name[1:])) is not None:
            return Printed(f"|Λ|²{f.text()}", rf"|\Lambda|^{{2}}{f.latex()}",
                           frozenset({"norm"} | f.kinds()))
        for prefix, kind, fmt, tex in (
                ("Fhol", "Fhol", "F_hol[{}]", r"F_{{hol,{}}}"),
                ("γ", "γ", "γ[{}]", r"\gamma_{{{}}}"),
                ("b", "b", "b[{}]", r"b_{{{}}}"),
                ("V", "V", "V[{}]", r"V_{{{}}}"), ("P", "V", "P[{}]", r"P_{{{}}}")):
            rest = name[len(prefix):]
            pool = {"Fhol": self.coordinates, "γ": self.constraints, "b": self.programmed,
                    "V": self.virtual, "P": self.virtual}[prefix]
            if name.startswith(prefix) and rest in pool:
                return Printed(fmt.format(rest), tex.format(latex_name(rest)),
                               frozenset({kind}))
        for prefix, head, head_tex in (("vn", "v_n", r"v_{n}"), ("nf", "|∇f|", r"|\nabla f|"),
                                       ("dX", "dX", "dX"), ("dY", "dY", "dY"),
                                       ("dZ", "dZ", "dZ"), ("fX", "∇f_X", r"\nabla f_{X}"),
                                       ("fY", "∇f_Y", r"\nabla f_{Y}"),
                                       ("fZ", "∇f_Z", r"\nabla f_{Z}"),
                                       ("s", "s", "s"), ("d", "d", "d")):
            if name.startswith(prefix) and name[len(prefix):] in self.bodies:
                f = _Frame(name[len(prefix):])
                return Printed(head + f.text(), head_tex + f.latex(),
                               frozenset({"contact", "frame"}))
        m = re.match(r"^l(\d)Q(E?)(\d*)$", name)
        if m:
            k, e, i = m.groups()
            tag = ",".join(x for x in (e, i) if x)
            return Printed(f"Λ_{k}" + (f"[{tag}]" if tag else ""),
                           rf"\Lambda_{{{k}}}" + (f"^{{{tag}}}" if tag else ""),
                           frozenset({"Λ"}))
        return None

    def _fallback(self, name: str) -> Printed:
        """A name no rule reads: as written (a name of the model), its marks readable."""
        text = re.sub(r"#(\w+)", lambda m: f"⁽{m.group(1).translate(_SUPER)}⁾", name)
        return Printed(text, latex_name(name, self.states), user="#" not in name)

    # ------------------------------------------------------------ the set
    def make_unique(self, names: Iterable[str]) -> None:
        """Fix the printed names of ``names``: two that would print alike get ``~2``,
        ``~3`` … in the order given (a name of the model keeps its own)."""
        taken: dict[str, str] = {}
        order = sorted(dict.fromkeys(names), key=lambda n: not self.printed(n).user)
        for n in order:
            p = self.printed(n)
            text, k = p.text, 1
            while text in taken and taken[text] != n:
                k += 1
                text = f"{p.text}~{k}"
            if k > 1:
                p = Printed(text, rf"{p.latex}{{}}_{{\sim {k}}}", p.kinds | {"tilde"},
                            user=p.user)
            taken[text] = n
            self._unique[n] = p

    def set_derivative(self, name: str, of: str, order: int) -> None:
        """Print ``name`` as the ``order``-th time derivative of ``of`` (``XCRod1't't``
        → ``Ẍ_C(Rod1)``, ``ωXRod1't`` → ``ω̇_x(Rod1)``, ``xC't't`` as written): a
        one-letter head takes the dot(s), a name of several letters the dot after the
        parenthesis, a name of the model its ``'t``. ``of`` is printed as the set
        prints it (call after :meth:`make_unique`)."""
        self._unique[name] = _rate(self._unique.get(of, self.printed(of)), order)

    def items(self) -> list[tuple[str, str]]:
        """``(internal name, printed text)`` of every name of the set."""
        return [(n, p.text) for n, p in self._unique.items()]

    def has(self, name: str) -> bool:
        """Whether ``name`` is one of the set's names (made unique)."""
        return name in self._unique

    def text(self, name: str) -> str:
        """The printed text of ``name``."""
        return self._unique.get(name, self.printed(name)).text

    def latex(self, name: str) -> str:
        """The LaTeX of ``name``."""
        return self._unique.get(name, self.printed(name)).latex

    def kinds(self, names: Iterable[str]) -> list[str]:
        """The legend's kinds that ``names`` use, in the legend's order."""
        used: set[str] = set()
        for n in names:
            used |= self._unique.get(n, self.printed(n)).kinds
        return [k for k in LEGEND if k in used]

    def legend(self, names: Iterable[str]) -> list[tuple[str, str, str]]:
        """``(text key, LaTeX key, meaning)`` for each kind ``names`` use."""
        return [LEGEND[k] for k in self.kinds(names)]


def name_table(eq, names: Iterable[str] = ()) -> NameTable:
    """The :class:`NameTable` of equations ``eq`` (an :class:`~kidym.eom.equations.
    Equations`), the printed names of ``names`` made unique."""
    model = eq.model
    coords = [str(q) for q in eq.coordinates]
    speeds = [str(w) for w in eq.speeds]
    states = coords + speeds + [q + "'t" for q in coords]
    users = set(states) | {str(p) for p in eq.parameters} | {"t"}
    users |= {d.name for d in model.definitions}
    users |= {getattr(d, "name", "") for d in model.velocity_definitions} - {""}
    users |= set(model.pseudo_velocities) | set(model.controls) | set(model.inputs)
    cons = eq.constraints
    constraint_names = list(cons.names) if cons is not None else []
    users |= set(constraint_names)
    if cons is not None:
        users |= set(cons.multiplier_names)
    programmed = [p.name for p in model.programmed]
    virtual = [v.name for v in model.virtual_constraints]
    users |= set(programmed) | set(virtual)
    table = NameTable(bodies=[b.name for b in model.bodies], states=states, users=users,
                      known=[str(s) for s in eq.graph.definitions],
                      coordinates=coords, speeds=speeds, constraints=constraint_names,
                      programmed=programmed, virtual=virtual)
    table.make_unique([*states, *users, *names])
    return table


#: the legend's Unicode in LaTeX text (``pdflatex`` with ``inputenc`` knows none of it)
_TEX_TEXT = [("_", r"\_"), ("β̇", r"$\dot\beta$"), ("ẇ", r"$\dot w$"), ("a⁰", "$a^{0}$"),
             ("ε⁰", r"$\varepsilon^{0}$"), ("Sᵀg", "$S^{T}g$"), ("Bᵀ", "$B^{T}$"),
             ("⁽¹⁾", "$^{(1)}$"), ("⁽⁰⁾", "$^{(0)}$"), ("·", r"$\cdot$"), ("×", r"$\times$"),
             ("ε", r"$\varepsilon$"),
             ("τ", r"$\tau$"), ("ω", r"$\omega$"), ("β", r"$\beta$"), ("…", r"\ldots{}"),
             ("←", r"$\leftarrow$"), ("∂", r"$\partial$"), ("−", "$-$"), ("'t", "'t")]


def latex_text(meaning: str) -> str:
    """A legend's meaning as LaTeX text (ASCII; the few symbols it uses as math)."""
    for a, b in _TEX_TEXT:
        meaning = meaning.replace(a, b)
    return meaning
