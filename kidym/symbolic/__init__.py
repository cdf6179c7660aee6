"""Symbolic core: the DAG of named intermediate quantities (KiDyM §6)."""

from kidym.symbolic.graph import Graph

__all__ = ["Graph"]
