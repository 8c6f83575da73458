"""Simulators of the other station hosts, each on the shared programme (``SimStation``)."""
