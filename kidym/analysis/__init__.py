"""Analyses beyond time histories (issue 17)."""
