"""The equations handed on to other tools: CasADi functions (:mod:`kidym.export.casadi`).

Nothing is imported here: each exporter loads its own optional dependency when called.
"""
