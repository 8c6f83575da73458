"""The song search client (Apple's public iTunes Search API, no key): what a song is called on
the streaming services, as untrusted answers turned into frozen values."""

from .client import ITUNES_SEARCH_URL, SongSearch
from .errors import SongSearchAnswerError, SongSearchError, SongSearchUnavailable
from .models import SongHit

__all__ = [
    "ITUNES_SEARCH_URL",
    "SongHit",
    "SongSearch",
    "SongSearchAnswerError",
    "SongSearchError",
    "SongSearchUnavailable",
]
