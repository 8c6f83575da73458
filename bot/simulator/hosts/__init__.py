"""Simulators of the other station hosts OnAir speaks to, one module per kind."""
