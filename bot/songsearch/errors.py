"""What can go wrong asking the search: the server could not answer (try again later), or it
answered something that is not a search answer (nothing in it is used)."""

from __future__ import annotations


class SongSearchError(Exception):
    """A search that gave no answer. ``str(error)`` is the technical line for logs: the server
    and what went wrong, never the song asked for."""


class SongSearchUnavailable(SongSearchError):
    """Timeout, connection failure, rate limit or server error: worth asking again later."""


class SongSearchAnswerError(SongSearchError):
    """An answer that is not a search answer: not JSON, too large, the wrong shape, a redirect
    or a refusal (4xx). Nothing of it is used."""
