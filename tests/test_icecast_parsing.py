"""Icecast 2's status page and ICY metadata, parsed from bodies shaped exactly as the real server
writes them (Icecast 2.4.4's web/xml2json.xslt; the bodies of xiph/Icecast-Server issues 12, 34,
38, 43 and 74; a run of Debian's icecast2 2.4.4 fed by FFmpeg)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from bot.station.errors import Problem, StationNotFound, StationResponseError
from bot.station.hosts.icecast import icy
from bot.station.hosts.icecast.status import decode_status, parse_source, pick_source, sources

AT = datetime(2026, 11, 29, 5, 39, tzinfo=UTC)
BASE = "http://10.0.0.5:8000"

# What Icecast 2.4.4 (Debian) answered with FFmpeg as the source of /live and a title set
# through /admin/metadata without charset=UTF-8 (so the stats read the UTF-8 as Latin-1).
REAL_ONE = (
    '{"icestats":{"admin":"admin@test","host":"icecast.test","location":"Test",'
    '"server_id":"Icecast 2.4.4","server_start":"Sun, 29 Nov 2026 05:38:58 +0000",'
    '"server_start_iso8601":"2026-11-29T05:38:58+0000","source":{"genre":"Jazz",'
    '"listener_peak":0,"listeners":0,"listenurl":"http://icecast.test:18765/live",'
    '"server_description":"A test","server_name":"Test FM","server_type":"audio/mpeg",'
    '"stream_start":"Sun, 29 Nov 2026 05:38:59 +0000",'
    '"stream_start_iso8601":"2026-11-29T05:38:59+0000",'
    '"title":"It\'s \\"quoted\\" - caf\u00c3\u00a9","dummy":null}}}'
).encode()


def source_json(mount: str, title: str = '"Artist - Song"', listeners: str = "4") -> str:
    return (
        '{"audio_info":"channels=2;samplerate=44100;bitrate=128","bitrate":128,"channels":2,'
        f'"genre":"various","listener_peak":9,"listeners":{listeners},'
        f'"listenurl":"http://localhost:8000{mount}","samplerate":44100,'
        '"server_description":"Unspecified description","server_name":"Radio",'
        '"server_type":"audio/mpeg","stream_start":"Mon, 05 Sep 2022 23:37:46 +0000",'
        f'"stream_start_iso8601":"2022-09-05T23:37:46+0000","title":{title},"dummy":null}}'
    )


def body(source: str | None) -> bytes:
    head = (
        '{"icestats":{"admin":"icemaster@localhost","host":"localhost","location":"Earth",'
        '"server_id":"Icecast 2.4.4","server_start":"Sun, 10 Jan 2021 21:04:08 +0100",'
        '"server_start_iso8601":"2021-01-10T21:04:08+0100",'
    )
    middle = f'"source":{source},' if source is not None else ""
    return (head + middle + '"dummy":null}}').encode()


def test_the_real_servers_answer_reads_whole():
    info = parse_source(decode_status(REAL_ONE), "/live", BASE, AT).info
    assert info.name == "Test FM"
    assert info.description == "A test"
    assert info.genre == "Jazz"
    assert info.listeners == 0
    # Quotes kept; the Latin-1 reading of UTF-8 undone.
    assert info.now_playing == 'It\'s "quoted" - café'
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title) == ('It\'s "quoted"', "café")
    assert play.started is None  # Icecast says nothing of when it started
    # listenurl names the configured hostname, a public name here: the link listeners get.
    assert info.links.listen == "http://icecast.test:18765/live"
    assert info.artwork is None
    assert info.recent == ()
    assert info.next_display is None


def test_one_source_is_an_object_several_a_list_none_absent():
    one = decode_status(body(source_json("/live")))
    assert [s["listenurl"] for s in sources(one)] == ["http://localhost:8000/live"]
    several = decode_status(body("[" + source_json("/live") + "," + source_json("/lofi") + "]"))
    picked = pick_source(several, "/lofi")
    assert picked["listenurl"] == "http://localhost:8000/lofi"
    none = decode_status(body(None))
    assert sources(none) == []
    with pytest.raises(StationNotFound):
        pick_source(none, "/live")
    with pytest.raises(StationNotFound):
        pick_source(several, "/other")


def test_listenurl_on_localhost_gives_the_address_onair_asks():
    """The default <hostname> is localhost: no listener can open that, OnAir's address can."""
    info = parse_source(decode_status(body(source_json("/live"))), "/live", BASE, AT).info
    assert info.links.listen == f"{BASE}/live"


def test_counts_as_strings_and_numbers_alike():
    info = parse_source(
        decode_status(body(source_json("/live", listeners='"12"'))), "/live", BASE, AT
    ).info
    assert info.listeners == 12


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        (" - ", None),  # issue 74: "title": - , (an empty "artist - title")
        ("-", None),  # issue 34/43: a lone dash, bare
        (".5", ".5"),  # XPath reads it as a number; 2.4 writes it bare, invalid JSON
        ("5.", "5."),
        ("-01", "-01"),
        ("-.5", "-.5"),
        ("1979", "1979"),  # valid JSON, but a number: kept as its text
        ("1.50", "1.50"),
        ("true", "true"),
    ],
)
def test_number_like_titles_written_bare_by_2_4_are_read_as_text(raw, title):
    answer = body(source_json("/live", title=raw))
    info = parse_source(decode_status(answer), "/live", BASE, AT).info
    assert info.now_playing == title


def test_control_characters_left_unescaped_are_read():
    answer = body(source_json("/live", title='"Bell\x07 - Tab\tbed"'))
    info = parse_source(decode_status(answer), "/live", BASE, AT).info
    assert info.now_playing == "Bell\x07 - Tab\tbed"


def test_the_startup_answer_without_its_brace_is_repaired():
    """Issue 38: right after start-up the first member is a hidden one; its '{' is lost."""
    answer = (
        b'{"icestats":"server_start":"Sat, 03 Oct 2020 15:45:30 +0200",'
        b'"server_start_iso8601":"2020-10-03T15:45:30+0200","dummy":null}}'
    )
    icestats = decode_status(answer)
    assert icestats["server_start"] == "Sat, 03 Oct 2020 15:45:30 +0200"
    with pytest.raises(StationNotFound):
        pick_source(icestats, "/live")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (b"", Problem.EMPTY),
        (b"<html><body>404 - Could not parse XSLT file</body></html>", Problem.NOT_JSON),
        (b'{"icestats":{"source":{"title":"cut', Problem.NOT_JSON),
        (b'{"icestats":{"title": Artist - Song }}', Problem.NOT_JSON),
        (b"[1, 2]", Problem.NOT_OBJECT),
        (b'{"icestats":"up"}', Problem.WRONG_SHAPE),
    ],
)
def test_what_cannot_be_repaired_is_a_clean_error(answer, problem):
    with pytest.raises(StationResponseError) as caught:
        decode_status(answer)
    assert caught.value.problem is problem


def test_a_hostile_source_is_absent_values_not_a_crash():
    answer = body(
        '{"listenurl":"http://h/live","listeners":"lots","title":["x"],"server_name":{"a":1},'
        f'"genre":"{"g" * 5000}"}}'
    )
    info = parse_source(decode_status(answer), "/live", BASE, AT).info
    assert info.listeners is None
    assert info.now_playing is None
    assert info.name is None
    assert info.genre is not None
    assert len(info.genre) == 500


def test_artist_set_apart_joins_the_title():
    """Ogg sources set artist and title apart (format_ogg.c)."""
    answer = body(
        source_json("/live", title='"Song"').replace('"genre"', '"artist":"Band","genre"')
    )
    info = parse_source(decode_status(answer), "/live", BASE, AT).info
    assert info.now_playing == "Band - Song"


# ICY metadata ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "title"),
    [
        (b"StreamTitle='Artist - Song';\x00\x00\x00", "Artist - Song"),
        (b"StreamTitle='';\x00", ""),
        # Quotes are not escaped: Icecast ends the title at the first "';".
        (
            b"StreamTitle='It's \"Don't\" - O'Brien';StreamUrl='http://x';",
            "It's \"Don't\" - O'Brien",
        ),
        ("StreamTitle='Café - Ünïcode';".encode(), "Café - Ünïcode"),
        ("StreamTitle='Café';".encode("latin-1"), "Café"),  # the default charset
        (b"StreamTitle='No end'\x00\x00", "No end"),
        (b"StreamUrl='http://x';", None),
        (b"\x00" * 32, None),
        (b"StreamTitle='Bell\x07 - Line\nbreak';", "Bell - Linebreak"),
    ],
)
def test_stream_title(block, title):
    assert icy.stream_title(block) == title


@pytest.mark.parametrize("value", [None, "0", "-5", "abc", "99999999", str(icy.MAX_METAINT + 1)])
def test_an_absurd_metaint_means_no_metadata(value):
    headers = {} if value is None else {"icy-metaint": value}
    with pytest.raises(icy.NoMetadata):
        icy.metaint_of(headers)


def test_a_sane_metaint():
    assert icy.metaint_of({"icy-metaint": " 16000 "}) == 16000


class Feed:
    """A body that hands out what it holds in pieces of at most ``piece`` bytes."""

    def __init__(self, data: bytes, piece: int = 7) -> None:
        self.data = data
        self.piece = piece
        self.largest_read = 0

    async def read(self, n: int = -1) -> bytes:
        take = min(n, self.piece)
        self.largest_read = max(self.largest_read, take)
        out, self.data = self.data[:take], self.data[take:]
        return out

    async def readexactly(self, n: int) -> bytes:
        if len(self.data) < n:
            raise asyncio.IncompleteReadError(self.data, n)
        out, self.data = self.data[:n], self.data[n:]
        return out


def block(text: bytes) -> bytes:
    length = -(-len(text) // 16)
    return bytes([length]) + text.ljust(length * 16, b"\x00")


async def test_blocks_skip_audio_and_unchanged_markers():
    metaint = 20
    audio = b"\xff" * metaint
    data = (
        audio
        + block(b"StreamTitle='One';")
        + audio
        + b"\x00"
        + audio
        + block(b"StreamTitle='Two';")
    )
    feed = Feed(data)
    titles = [b.title async for b in icy.blocks(feed, metaint)]
    assert titles == ["One", "Two"]
    assert feed.largest_read <= 7  # audio read in the pieces that came, none kept


async def test_a_stream_cut_inside_a_block_ends_with_incomplete_read():
    data = b"\x00" * 10 + bytes([3]) + b"StreamTitle='x"
    with pytest.raises(asyncio.IncompleteReadError):
        _ = [b async for b in icy.blocks(Feed(data), 10)]


async def test_audio_is_read_in_bounded_chunks():
    metaint = icy.CHUNK * 3
    feed = Feed(b"\x01" * metaint + block(b"StreamTitle='Big';"), piece=10**9)
    titles = [b.title async for b in icy.blocks(feed, metaint)]
    assert titles == ["Big"]
    assert feed.largest_read == icy.CHUNK
