"""The passes of the model builder (:func:`kidym.model.build.build_model`), in order.

1. :mod:`~kidym.model.passes.statements`: the statements read into tables, every
   formula converted and the names it uses recorded;
2. :mod:`~kidym.model.passes.bodies`: body records into transform chains and inertia;
3. :mod:`~kidym.model.passes.instructions`: the instruction lists (initial values,
   time span and outputs after step 4);
4. :mod:`~kidym.model.passes.classify`: every name a parameter, definition,
   coordinate, pseudo-velocity or a missing value;
5. :mod:`~kidym.model.passes.checks`: the checks across statements.

Each is a module of functions over the build's workspace
(:class:`~kidym.model.passes.workspace.Builder`), which holds the tables one pass
fills for the next and the tools they share.
"""
