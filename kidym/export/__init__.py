"""The equations handed on to other tools: a standalone C library (:mod:`.clib`), an FMI 3.0
FMU (:mod:`.fmu`), CasADi functions (:mod:`.casadi`), the ``kidym export`` command
(:mod:`.commands`).

Nothing is imported here: each exporter loads its own optional dependency when called.
"""
