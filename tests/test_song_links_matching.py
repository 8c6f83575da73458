"""Which search result is the song on air: the hard cases, as a table. A wrong link is worse
than none: another recording (live, remix, acoustic, "Part 2", "Taylor's Version") never
matches; "Remastered", "Radio Edit", "feat." and accents or case never stop a match."""

from __future__ import annotations

import pytest

from bot.songlinks import best_match, matches
from bot.songlinks.matching import search_words
from bot.songsearch import SongHit


def hit(artist: str, title: str, album: str = "", track_id: int = 1) -> SongHit:
    return SongHit(track_id, artist, title, album)


# (station artist, station title, result artist, result title, result album, same song?)
CASES = [
    ("Queen", "Bohemian Rhapsody", "Queen", "Bohemian Rhapsody", "", True),
    ("queen", "BOHEMIAN RHAPSODY", "Queen", "Bohemian Rhapsody", "", True),
    ("Queen", "Bohemian Rhapsody", "Queen", "Bohemian Rhapsody (Remastered 2011)", "", True),
    ("Queen", "Bohemian Rhapsody - Remastered 2011", "Queen", "Bohemian Rhapsody", "", True),
    ("Queen", "Bohemian Rhapsody", "Queen", "Bohemian Rhapsody - 2011 Remaster", "", True),
    ("Queen", "Bohemian Rhapsody", "Queen", "Bohemian Rhapsody (Live Aid)", "", False),
    ("Queen", "Bohemian Rhapsody", "Queen", "Bohemian Rhapsody - Live at Wembley", "", False),
    ("Queen", "Bohemian Rhapsody", "Queen", "Bohemian Rhapsody", "Live at Wembley '86", False),
    (
        "Queen",
        "Bohemian Rhapsody (Live)",
        "Queen",
        "Bohemian Rhapsody",
        "A Night at the Opera",
        False,
    ),
    ("Queen", "Bohemian Rhapsody (Live)", "Queen", "Bohemian Rhapsody (Live)", "", True),
    ("Queen", "Bohemian Rhapsody - Live", "Queen", "Bohemian Rhapsody (Live At Wembley)", "", True),
    (
        "Queen",
        "Bohemian Rhapsody (Live)",
        "Queen",
        "Bohemian Rhapsody",
        "Live at Wembley '86",
        True,
    ),
    ("Hole", "Violet", "Hole", "Violet", "Live Through This", True),
    ("Daft Punk", "Get Lucky (Radio Edit)", "Daft Punk", "Get Lucky", "", True),
    (
        "Daft Punk",
        "Get Lucky",
        "Daft Punk",
        "Get Lucky (Radio Edit) [feat. Pharrell Williams]",
        "",
        True,
    ),
    (
        "Daft Punk feat. Pharrell Williams",
        "Get Lucky",
        "Daft Punk",
        "Get Lucky (feat. Pharrell Williams)",
        "",
        True,
    ),
    ("Daft Punk ft. Pharrell", "Get Lucky", "Daft Punk & Pharrell Williams", "Get Lucky", "", True),
    ("Daft Punk", "Get Lucky feat. Pharrell Williams", "Daft Punk", "Get Lucky", "", True),
    ("Daft Punk", "Get Lucky", "Daft Punk", "Get Lucky (Daft Punk Remix)", "", False),
    (
        "Daft Punk",
        "Get Lucky (Daft Punk Remix)",
        "Daft Punk",
        "Get Lucky (Daft Punk Remix)",
        "",
        True,
    ),
    ("Daft Punk", "Get Lucky (Extended Mix)", "Daft Punk", "Get Lucky", "", False),
    ("Beyoncé", "Halo", "Beyonce", "Halo", "", True),
    ("Sigur Rós", "Hoppípolla", "Sigur Ros", "Hoppipolla", "", True),
    ("Mira Solène", "Café des Étoiles", "Mira Solene", "Cafe des Etoiles", "", True),
    ("Simon & Garfunkel", "The Boxer", "Simon and Garfunkel", "The Boxer", "", True),
    ("Nirvana", "Come as You Are", "Nirvana", "Come As You Are (Unplugged)", "", False),
    ("Nirvana", "Lithium", "Nirvana", "Lithium (Acoustic)", "", False),
    ("Coldplay", "Yellow", "Coldplay", "Yellow (Instrumental)", "", False),
    ("Coldplay", "Yellow", "Karaoke Hits", "Yellow (In the Style of Coldplay)", "", False),
    ("Coldplay", "Yellow", "Coldplay", "Yellow (Karaoke Version)", "", False),
    ("Taylor Swift", "Love Story", "Taylor Swift", "Love Story (Taylor's Version)", "", False),
    (
        "Pink Floyd",
        "Another Brick in the Wall",
        "Pink Floyd",
        "Another Brick in the Wall, Pt. 2",
        "",
        False,
    ),
    (
        "Pink Floyd",
        "Another Brick in the Wall (Part 2)",
        "Pink Floyd",
        "Another Brick in the Wall (Part 2)",
        "",
        True,
    ),
    ("Adele", "Hello", "Lionel Richie", "Hello", "", False),
    ("Adele", "Hello", "Adele", "Hello (Slowed)", "", False),
    ("Adele", "Hello", "Adele", "Hello, Goodbye", "", False),
    ("The Beatles", "Hey Jude", "The Beatles", "Hey Jude (Mono)", "", True),
    ("Caetano Veloso", "Sozinho (Ao Vivo)", "Caetano Veloso", "Sozinho", "", False),
    ("Caetano Veloso", "Sozinho (Ao Vivo)", "Caetano Veloso", "Sozinho - Ao Vivo", "", True),
    ("", "Hello", "Adele", "Hello", "", False),
    ("Adele", "", "Adele", "Hello", "", False),
    ("Adele", "(Live)", "Adele", "(Live)", "", False),
]


@pytest.mark.parametrize(
    ("artist", "title", "their_artist", "their_title", "album", "same"),
    CASES,
    ids=[f"{c[0]} - {c[1]} vs {c[2]} - {c[3]} [{c[4]}]" for c in CASES],
)
def test_the_same_song_and_only_it_matches(artist, title, their_artist, their_title, album, same):
    assert matches(artist, title, hit(their_artist, their_title, album)) is same


def test_the_studio_recording_wins_over_a_live_one_listed_first():
    hits = [
        hit("Queen", "Bohemian Rhapsody (Live)", track_id=1),
        hit("Queen", "Bohemian Rhapsody (Remastered 2011)", track_id=2),
        hit("Queen", "Bohemian Rhapsody", track_id=3),
    ]
    chosen = best_match("Queen", "Bohemian Rhapsody", hits)
    assert chosen is not None
    assert chosen.track_id == 3  # word for word the same beats the remaster


def test_the_first_match_when_none_is_word_for_word():
    hits = [
        hit("Queen", "Bohemian Rhapsody (Live)", track_id=1),
        hit("Queen", "Bohemian Rhapsody - Remastered", track_id=2),
    ]
    chosen = best_match("Queen", "Bohemian Rhapsody", hits)
    assert chosen is not None
    assert chosen.track_id == 2


def test_nothing_when_nothing_matches():
    assert best_match("Queen", "Bohemian Rhapsody", [hit("Queen", "We Will Rock You")]) is None
    assert best_match("Queen", "Bohemian Rhapsody", []) is None


@pytest.mark.parametrize(
    ("artist", "title", "words"),
    [
        ("Daft Punk feat. Pharrell Williams", "Get Lucky (Radio Edit)", ("Daft Punk", "Get Lucky")),
        ("Beyoncé", "Halo", ("Beyoncé", "Halo")),
        ("Queen", "Bohemian Rhapsody - Remastered 2011", ("Queen", "Bohemian Rhapsody")),
        ("Queen", "Bohemian Rhapsody (Live at Wembley)", ("Queen", "Bohemian Rhapsody live")),
        ("Simon & Garfunkel", "The Boxer", ("Simon & Garfunkel", "The Boxer")),
        ("Daft Punk", "Get Lucky feat. Pharrell", ("Daft Punk", "Get Lucky")),
    ],
)
def test_the_search_asks_for_the_primary_artist_and_the_bare_title(artist, title, words):
    assert search_words(artist, title) == words
