"""Showing the results: equations in print, machine-readable forms, plots."""
