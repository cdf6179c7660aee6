"""Calculations without equations of motion: direct kinematics (``РАСЧЕТ := КИНЕМАТИКА``)."""
