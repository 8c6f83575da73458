"""Simulators of other station hosts, each serving its host's own endpoints and shapes from the
same programme (``SimStation``) as the RadioBOSS simulator."""
