"""The equations handed on to other tools: a standalone C library (:mod:`.clib`), an FMI 3.0
Model Exchange FMU (:mod:`.fmu`), the ``kidym export`` command (:mod:`.commands`)."""
