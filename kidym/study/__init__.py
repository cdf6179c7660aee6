"""Parameter studies: ``ВАРЬИРОВАТЬ`` of parameters and initial values, ``kidym sweep``.

:mod:`~kidym.study.design` makes the table of runs (a grid or a random sample),
:mod:`~kidym.study.sweep` runs it on a loop, a thread pool or a Dask cluster
(:mod:`~kidym.study.runs`: the unit of work, :mod:`~kidym.study.worker`: the Dask
side), :mod:`~kidym.study.output` writes the labelled NetCDF file and the summary plots,
:mod:`~kidym.study.commands` is the command line. docs/language.md §5.11.
"""
