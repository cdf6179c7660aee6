"""Canonical model texts for the language tests.

``FIG2`` and ``FIG3`` are the 14-body biped records of seed 003 (Andrieiev 2022),
Fig. 2 (record form (1)) and Fig. 3 (form (6), with central transforms), copied
character for character, trailing blanks included. ``BALL_RECORD`` is the ball
record of seed 000 (Andrieiev, Holovnia 2025); ``BALL`` is the ball model of that
paper around it (parameters, constraints (20), (22), instructions and initial
conditions as printed there).
"""

#: Seed 003, Fig. 2: the biped in record form (1) (lines 114-135).
FIG2 = (
    'Taz |Sx(Ax), Sy(Ay), Sz(Az) | m(mt), Jx(Jtx), Jy(Jty), Jz(Jtz);  \n'
    ' Mvv~Taz |Sx(Tx-Ax), Sy(Ty-Ay), Sz(Tz+hv-Az) | m(mV), Jx(Jmvx), Jy(Jmvy), Jz(Jmvz);  \n'
    ' Efl~Taz |Sx(-Ax), Sy(a2L-Ay), Sz(-Az), Ry(psiL), Rz(tetaSL), Sz(-cL), Rx(alfaSL),  \n'
    ' Sx(Elx), Sy(Ely), Sz(Elz) | m(meL), Jx(Jex), Jy(Jey), Jz(Jez);  \n'
    ' BdL~Efl |Sx(-Elx), Sy(fL-Ely), Sz(-Elz-eL), Ry(-gammaSL-psiL),  \n'
    ' Sx(Blx), Sy(Bly), Sz(Blz) | m(mbL), Jx(Jbx), Jy(Jby), Jz(Jbz);  \n'
    ' GIL~BdL |Sx(-Blx), Sy(-Bly), Sz(-Blz-bL), Ry(betaSL),  \n'
    ' Sx(Glx), Sy(Gly), Sz(Glz) | m(mgL), Jx(Jgx), Jy(Jgy), Jz(Jgz);  \n'
    ' GsL~GIL |Sx(kL-Glx), Sy(-Gly), Sz(-Glz-qL), Ry(-nuSL),  \n'
    ' Sx(Qlx), Sy(Qly), Sz(Qlz) | m(mpL), Jx(Jpx), Jy(Jpy), Jz(Jpz);  \n'
    ' StL~GsL |Sx(-Qlx), Sy(-Qly), Sz(-Qlz-sL), Rx(epsilonSL),  \n'
    ' Sx(Slx), Sy(Sly), Sz(Slz) | m(msL), Jx(Jsx), Jy(Jsy), Jz(Jsz);  \n'
    ' Efr~Taz |Sx(-Ax), Sy(-Ay-a2R), Sz(-Az), Ry(psiR), Rz(-tetaSR), Sz(-cR), Rx(alfaSR),  \n'
    ' Sx(Erx), Sy(Ery), Sz(Erz) | m(meR), Jx(Jex), Jy(Jey), Jz(Jez);  \n'
    ' Bdr~Efr |Sx(-Erx), Sy(-fr-Ery), Sz(-Erz-eR), Ry(-gammaSR-psiR),  \n'
    ' Sx(Brx), Sy(Bry), Sz(Brz) | m(mbR), Jx(Jbx), Jy(Jby), Jz(Jbz);  \n'
    ' GIR~Bdr |Sx(-Brx), Sy(-Bry), Sz(-Brz-bR), Ry(betaSR),  \n'
    ' Sx(Grx), Sy(Gry), Sz(Grz) | m(mgR), Jx(Jgx), Jy(Jgy), Jz(Jgz);  \n'
    ' GsR~GIR |Sx(kR-Grx), Sy(-Gry), Sz(-qR-Grz), Ry(-nuSR),  \n'
    ' Sx(Qrx), Sy(Qry), Sz(Qrz) | m(mpR), Jx(Jpx), Jy(Jpy), Jz(Jpz);  \n'
    ' StR~GsR |Sx(-Qrx), Sy(-Qry), Sz(-Qrz-sR), Rx(-epsilonSR),  \n'
    ' Sx(Srx), Sy(Sry), Sz(Srz) | m(msR), Jx(Jsx), Jy(Jsy), Jz(Jsz);'
)

#: Seed 003, Fig. 3: the biped in record form (6) (lines 141-166).
FIG3 = (
    'Taz |Sx(XO), Sy(YO), Sz(ZO) | Sx(Ax), Sy(Ay), Sz(Az),  \n'
    ' m(mt), Jx(Jtx), Jy(Jty), Jz(Jtz);  \n'
    ' Mvv~Taz |Sx(0), Sy(0), Sz(hv) | Sx(Tx), Sy(Ty), Sz(Tz),  \n'
    ' m(mV), Jx(Jmvx), Jy(Jmvy), Jz(Jmvz);  \n'
    ' Efl~Taz |Sy(a2L), Ry(psiL), Rz(tetaSL),  \n'
    ' Sz(-cL), Rx(alfaSL) | Sx(Elx), Sy(Ely), Sz(Elz),  \n'
    ' m(meL), Jx(Jex), Jy(Jey), Jz(Jez);  \n'
    ' BdL~Efl |Sz(-eL), Sy(fL), Ry(-gammaSL-psiL) | Sx(Blx), Sy(Bly), Sz(Blz),  \n'
    ' m(mbL), Jx(Jbx), Jy(Jby), Jz(Jbz);  \n'
    ' GIL~BdL |Sz(-bL), Ry(betaSL) | Sx(Glx), Sy(Gly), Sz(Glz),  \n'
    ' m(mgL), Jx(Jgx), Jy(Jgy), Jz(Jgz);  \n'
    ' GsL~GIL |Sx(kL), Sz(-qL), Ry(-nuSL) | Sx(Qlx), Sy(Qly), Sz(Qlz),  \n'
    ' m(mpL), Jx(Jpx), Jy(Jpy), Jz(Jpz);  \n'
    ' StL~GsL |Sz(-sL), Rx(epsilonSL) | Sx(Slx), Sy(Sly), Sz(Slz),  \n'
    ' m(msL), Jx(Jsx), Jy(Jsy), Jz(Jsz);  \n'
    ' Efr~Taz |Sy(-a2R), Ry(psiR), Rz(-tetaSR),  \n'
    ' Sz(-cR), Rx(alfaSR) | Sx(Erx), Sy(Ery), Sz(Erz),  \n'
    ' m(meR), Jx(Jex), Jy(Jey), Jz(Jez);  \n'
    ' Bdr~Efr |Sz(-eR), Sy(-fr), Ry(-gammaSR-psiR) | Sx(Brx), Sy(Bry), Sz(Brz),  \n'
    ' m(mbR), Jx(Jbx), Jy(Jby), Jz(Jbz);  \n'
    ' GIR~Bdr |Sz(-bR), Ry(betaSR) | Sx(Grx), Sy(Gry), Sz(Grz),  \n'
    ' m(mgR), Jx(Jgx), Jy(Jgy), Jz(Jgz);  \n'
    ' GsR~GIR |Sx(kR), Sz(-qR), Ry(-nuSR) | Sx(Qrx), Sy(Qry), Sz(Qrz),  \n'
    ' m(mpR), Jx(Jpx), Jy(Jpy), Jz(Jpz);  \n'
    ' StR~GsR |Sz(-sR), Rx(-epsilonSR) | Sx(Srx), Sy(Sry), Sz(Srz),  \n'
    ' m(msR), Jx(Jsx), Jy(Jsy), Jz(Jsz);'
)

#: Seed 000, the ball record (formula before (20)'s discussion), as printed.
BALL_RECORD = "Куля | Sx(xC), Sy(yC), Sz(zC), Q(λ0, λ1, λ2, λ3) | m, J, J, J;"

#: Seed 000, the heavy ball rolling in a spherical bowl: parameters, geometric
#: constraint (20), non-holonomic constraints (22), the record, instructions and
#: the initial conditions of the worked example.
BALL = """\
{ Куля у сферичній виймці (seed 000, рис. 2) }
R = 3, м;  r = 0.2, м;  m = 1, кг;
a = r/(R-r);  J = 0.4*m*r^2;
zC = R - sqrt((R-r)^2 - xC^2 - yC^2);     # (20) #
""" + BALL_RECORD + """
ПСЕВДОШВИДКОСТІ := ωХКуля, ωУКуля, ωZКуля;
xC't = a*(ωУКуля*(R-zC) + ωZКуля*yC);     # (22) #
yC't = -a*(ωХКуля*(R-zC) + ωZКуля*xC);
Pg.zC = -m*g;
КВАТЕРНІОН: Q(λ0, λ1, λ2, λ3), Ry(ψ), Rx(θ), Rz(φ);
ПОЧАТКОВІ УМОВИ := t(0), xC(1.5), yC(0), λ0(1), λ1(0), λ2(0), λ3(0),
                   ωХКуля(3), ωУКуля(2), ωZКуля(0);
ЧАС := t(0, 20);
ПОКАЗАТИ := yC(xC), zC(yC), ωZКуля;
РОЗРАХУНОК := ДИНАМІКА;
"""

#: A planar pendulum with a spring and a damper, in English keywords.
PENDULUM = """\
m = 2; l = 0.5, m; c = 10; b = 0.1;
Rod | Rz(phi) | Sx(l), m(m), Jz(m*l^2/12);
Cs.phi = c;   Db.phi = b;
GRAVITY := 0, -g, 0;
INITIAL := phi(pi/6), phi't = 0;
TIME := t(0, 5);
SHOW := phi, XCRod, YCRod(XCRod);
CALCULATION := DYNAMICS;
"""
