"""Shoutcast DNAS (2.x, and 1.x through its 7.html): a stream's now playing, its listeners and
its song history, polled (the DNAS pushes nothing)."""

from .client import ShoutcastClient

__all__ = ["ShoutcastClient"]
