"""Song links: where a song on air can be heard, found once per song for a whole fleet."""

from .matching import best_match, matches
from .service import SongLink, SongLinks, song_key, wanted, with_artwork

__all__ = ["SongLink", "SongLinks", "best_match", "matches", "song_key", "wanted", "with_artwork"]
