"""One simulated station: renders ``info``, ``getplaylist`` and ``getstats`` bodies at a moment."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

from .library import LibraryItem
from .programme import Airing, Programme
from .requests import RequestDesk

# Shape quirks of the field notes; each can be switched on per station at run time.
QUIRKS = frozenset(
    {
        "single_object",  # one-element lists (recent, mounts, TRACK) collapsed to a bare object
        "empty_track",  # currenttrack_info as [] and nexttrack_info as {}
        "string_numbers",  # listeners and playback numbers as strings
        "na_next",  # nexttrack "n/a" and no nexttrack_info
        "minimal",  # only the members the spec calls always present
        "artworkid_number",  # recent[].artworkid as a number
        "live_and_autodj",  # live and autodj both true during the live show
        "no_recent_started",  # recent items without `started`
        "empty_strings",  # missing values as ""
        "stopped",  # play-out stopped: no title, playback state "stop" (simulated, not recorded)
    }
)

COUNTRIES = (
    ("Germany", "de", 24),
    ("United States", "us", 20),
    ("United Kingdom", "gb", 12),
    ("France", "fr", 9),
    ("Netherlands", "nl", 7),
    ("Russia", "ru", 6),
    ("Brazil", "br", 5),
    ("Japan", "jp", 4),
    ("Egypt", "eg", 3),
    ("Spain", "es", 3),
    ("Canada", "ca", 3),
    ("Australia", "au", 2),
    ("Nigeria", "ng", 2),
)


def _stable(*parts: object) -> int:
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@dataclass
class SimStation:
    """State of one simulated station. ``public_url`` is what its links point at."""

    station_id: int
    programme: Programme
    key: str | None = None
    name: str = "OnAir Radio"
    zone: tzinfo = UTC
    seed: int = 1
    public_url: str = "http://127.0.0.1"
    allow_keyless: bool = False
    playlist_window: tuple[int, int] = (20, 30)
    quirks: set[str] = field(default_factory=set)
    # Mounts beyond the two every station has (names and URLs as a station's owner typed them).
    extra_mounts: list[dict[str, str]] = field(default_factory=list)
    # Links as a station's owner typed them, over the generated ones ("artwork", "stationlogo",
    # "port443", …; "station_url" is the website): broken or hostile URLs for tests.
    typed_links: dict[str, str] = field(default_factory=dict)
    # A compressed clock for tests: each item airs for its slot's seconds (``playback.len``)
    # but its ``DURATION`` is the library's, so a 6 s slot of a song is still a song, not a
    # jingle (shorter than 30 s).
    library_durations: bool = False
    # Song requests (``/w/songrequest*``): its rules and queue.
    song_requests: RequestDesk = field(init=False)

    def __post_init__(self) -> None:
        self.song_requests = RequestDesk(self.programme)

    # Authentication ---------------------------------------------------------------------

    def key_ok(self, key: str | None) -> bool:
        if self.key is None:
            return True
        if key is None and self.allow_keyless:
            return True
        return key == self.key

    # Helpers ----------------------------------------------------------------------------

    def _local(self, moment: float) -> datetime:
        return datetime.fromtimestamp(moment, UTC).astimezone(self.zone)

    def _stamp(self, moment: float) -> str:
        return self._local(moment).strftime("%Y-%m-%d %H:%M:%S")

    def listeners_at(self, moment: float) -> int:
        minute = int(moment // 60)
        wave = 40 + 25 * math.sin(moment / 900.0)
        return max(0, int(wave + _stable(self.seed, self.station_id, minute) % 15))

    def artwork_id(self, airing: Airing) -> str:
        return str(_stable(self.seed, airing.item.cast_title) % 10_000_000)

    def _links(self) -> dict[str, Any]:
        base = self.public_url.rstrip("/")
        host = base.split("://", 1)[-1]
        sid = self.station_id
        port = 8000 + sid
        http_base = "http://" + host.split(":")[0]
        https_base = "https://" + host.split(":")[0]
        mounts = [
            {
                "name": "/stream",
                "m3u": f"{http_base}:{port}/stream.m3u",
                "m3u_ssl": f"{https_base}:{port + 10000}/stream.m3u",
                "http": f"{http_base}:{port}/stream",
                "ssl": f"{https_base}:{port + 10000}/stream",
            },
            {
                "name": "/lofi",
                "m3u": f"{http_base}:{port}/lofi.m3u",
                "m3u_ssl": f"{https_base}:{port + 10000}/lofi.m3u",
                "http": f"{http_base}:{port}/lofi",
                "ssl": f"{https_base}:{port + 10000}/lofi",
            },
        ]
        return {
            "m3u": f"{http_base}:{port}/stream.m3u",
            "m3u_ssl": f"{https_base}:{port + 10000}/stream.m3u",
            "pls_uri": f"{host}/playlist/{sid}/stream.pls",
            "http": f"{http_base}:{port}/stream",
            "ssl": f"{https_base}:{port + 10000}/stream",
            "port80": f"{http_base}/stream/{sid}",
            "port443": f"{https_base}/stream/{sid}",
            "page": f"{base}/p/{sid}",
            "artwork": f"{base}/artwork/{sid}/current.png",
            "artwork_next": f"{base}/artwork/{sid}/next.png",
            "artwork_recent": f"{base}/artwork/{sid}/ARTID.png",
            "stationlogo": f"{base}/logo/{sid}.png",
            "mounts": mounts + self.extra_mounts,
            "api": base,
        } | {k: v for k, v in self.typed_links.items() if k != "station_url"}

    def _track_info(self, airing: Airing, *, listeners: int | None = None) -> dict[str, Any]:
        item = airing.item
        seconds = round(item.seconds if self.library_durations else airing.reported)
        attrs: dict[str, Any] = {
            "ARTIST": item.artist,
            "TITLE": item.title,
            "ALBUM": item.album,
            "YEAR": item.year,
            "GENRE": item.genre,
            "COMMENT": "",
            "FILENAME": item.filename,
            "DURATION": f"{seconds // 60:02d}:{seconds % 60:02d}",
            "PLAYCOUNT": str(100 + airing.number % 50),
            "LASTPLAYED": self._stamp(airing.started),
            "INTRO": "0.00",
            "OUTRO": "0.00",
            "LANGUAGE": item.language,
            "RATING": str(_stable(item.title) % 6),
            "BPM": "",
            "TAGS": item.genre.lower(),
            "F1": "",
            "F2": "",
            "F3": "",
            "F4": "",
            "F5": "",
            "CASTTITLE": item.cast_title,
            "ITEMTITLE": item.title,
        }
        if listeners is not None:
            attrs["LISTENERS"] = str(listeners)
        return {"@attributes": attrs}

    # Bodies -----------------------------------------------------------------------------

    def info(self, moment: float, blip: str | None = None) -> dict[str, Any]:
        """The ``info`` body at ``moment``; ``blip`` (a fault: "stopped" or "nothing") shapes
        this one answer as a play-out that stopped, or has nothing on air at all."""
        quirks = self.quirks | ({blip} if blip else set())
        now = self.programme.at(moment)
        following = self.programme.airing(now.number + 1)
        previous = self.programme.airing(now.number - 1)
        listeners = self.listeners_at(moment)
        live = now.item.kind == "live"
        links = self._links()
        recent = []
        for back in range(10):
            airing = self.programme.airing(now.number - back)
            entry: dict[str, Any] = {
                "title": airing.item.cast_title,
                "tracktitle": airing.item.title,
                "trackartist": airing.item.artist,
                "started": self._stamp(airing.started),
                "artworkid": self.artwork_id(airing),
            }
            if "artworkid_number" in quirks:
                entry["artworkid"] = int(entry["artworkid"])
            if "no_recent_started" in quirks:
                del entry["started"]
            recent.append(entry)
        pos_ms = int((moment - now.started) * 1000)
        len_ms = 0 if live else int(now.reported * 1000)
        next_known = now.next_known(moment)
        body: dict[str, Any] = {
            "station_name": self.name,
            "station_description": "Invented music, real code paths: OnAir's station simulator.",
            "station_url": self.typed_links.get(
                "station_url", f"{self.public_url.rstrip('/')}/p/{self.station_id}"
            ),
            "station_genre": "Eclectic",
            "autodj_title": (
                following.item.cast_title if live and next_known else now.item.cast_title
            ),
            "autodj": not live or "live_and_autodj" in quirks,
            "live": live,
            "nowplaying": now.item.cast_title,
            "playback": {"pos": pos_ms, "len": len_ms, "state": "play"},
            "currenttrack_info": [] if live else self._track_info(now, listeners=listeners),
            "nexttrack": following.item.cast_title if next_known else "",
            "nexttrack_info": self._track_info(following) if next_known else [],
            "prevtrack_info": self._track_info(previous),
            "listeners": listeners,
            "links": links,
            "recent": recent,
        }
        if "string_numbers" in quirks:
            body["listeners"] = str(listeners)
            body["playback"] = {"pos": str(pos_ms), "len": str(len_ms), "state": "play"}
        if "empty_track" in quirks:
            body["currenttrack_info"] = []
            body["nexttrack_info"] = {}
        if "na_next" in quirks:
            body["nexttrack"] = "n/a"
            body.pop("nexttrack_info", None)
        if "single_object" in quirks:
            body["recent"] = recent[0]
            links["mounts"] = links["mounts"][0]
        if "empty_strings" in quirks:
            body["station_description"] = ""
            body["station_genre"] = ""
            links["artwork_next"] = ""
        if "stopped" in quirks:
            # Play-out stopped (the encoder still answers): no title, playback not playing.
            body.update(nowplaying="", autodj_title="", autodj=False, live=False, listeners=0)
            body["playback"] = {"pos": 0, "len": 0, "state": "stop"}
            body["currenttrack_info"] = []
        if "nothing" in quirks:
            # Nothing on air (an encoder between sources): no title anywhere, playback "play".
            body.update(nowplaying="", autodj_title="", autodj=False, live=False, listeners=0)
            body.update(currenttrack_info=[], nexttrack="", nexttrack_info=[], recent=[])
            body["playback"] = {"pos": 0, "len": 0, "state": "play"}
        if "minimal" in quirks:
            body = {
                "nowplaying": body["nowplaying"],
                "autodj_title": body["autodj_title"],
                "listeners": body["listeners"],
                "links": {k: links[k] for k in ("m3u", "http", "page")},
                "recent": body["recent"],
            }
        return body

    def playlist(self, moment: float, size: int | None = None) -> dict[str, Any]:
        now = self.programme.at(moment)
        before, after = self.playlist_window
        if size is not None:
            before, after = size // 3, size - size // 3 - 1
        airings = [
            self.programme.airing(now.number + offset) for offset in range(-before, after + 1)
        ]
        slots = len(self.programme)
        # Playlist order, not time order: sort by position in the (repeating) playlist.
        airings.sort(key=lambda a: (a.number % slots, a.number))
        tracks: list[dict[str, Any]] = []
        for airing in airings:
            item = airing.item
            seconds = round(airing.reported)
            local = self._local(airing.started)
            tracks.append(
                {
                    "STARTTIME": local.strftime("%I:%M:%S %p").lstrip("0"),
                    "CASTTITLE": item.cast_title,
                    "DURATION": f"{seconds // 60:02d}:{seconds % 60:02d}",
                    "FILENAME": item.filename,
                    "RATING": str(_stable(item.title) % 6),
                    "PLAYCOUNT": str(100 + airing.number % 50),
                    "INTRO": "00:00",
                    "OUTRO": "00:00",
                    "BPM": "",
                    "PLAYLISTINDEX": str(airing.number % slots),
                    "INDEX": str(airing.number % slots + 1),
                    "FT_IDX": "-1",
                    "ITEMTYPE": "TRACK_PLAYED" if airing.number < now.number else "TRACK",
                    "PQUEUE": "0",
                    "ARTIST": item.artist,
                    "TITLE": item.title,
                    "ALBUM": item.album,
                    "YEAR": item.year,
                    "GENRE": item.genre,
                    "COMMENT": "",
                    "LASTPLAYED": self._stamp(airing.started),
                    "LANGUAGE": item.language,
                    "F1": "",
                    "F2": "",
                    "F3": "",
                    "F4": "",
                    "F5": "",
                }
            )
        if "single_object" in self.quirks and tracks:
            return {"TRACK": tracks[0]}
        return {"TRACK": tracks}

    def day_counts(self, day: date) -> tuple[int, int]:
        sessions = 150 + _stable(self.seed, self.station_id, day.isoformat()) % 350
        unique = max(1, sessions * (45 + _stable(self.seed, day.toordinal()) % 30) // 100)
        return sessions, unique

    def stats(self, first: date, last: date) -> dict[str, Any]:
        if last < first:
            first, last = last, first
        last = min(last, first + timedelta(days=400))
        days: list[dict[str, Any]] = []
        # As recorded by the spec: `days` may include entries outside the range asked for.
        for offset in range(-1, (last - first).days + 1):
            day = first + timedelta(days=offset)
            sessions, day_unique = self.day_counts(day)
            days.append({"date": day.isoformat(), "cnt": sessions, "cnt_unique": day_unique})
        in_range = [d for d in days if first.isoformat() <= d["date"] <= last.isoformat()]
        total_sessions = sum(d["cnt"] for d in in_range)
        total_unique = sum(d["cnt_unique"] for d in in_range)
        weight_sum = sum(w for _, _, w in COUNTRIES)
        rng = random.Random(_stable(self.seed, first, last))
        countries: list[dict[str, Any]] = []
        countries_tlh: list[dict[str, Any]] = []
        unique: list[dict[str, Any]] = []
        for country, iso, weight in COUNTRIES:
            share = weight / weight_sum * rng.uniform(0.95, 1.05)  # jitter that keeps the order
            countries.append(
                {"cnt": int(total_sessions * share), "country": country, "country_iso": iso}
            )
            countries_tlh.append(
                {"country": country, "country_iso": iso, "tlh": int(total_sessions * share * 0.7)}
            )
            unique.append(
                {"uniq": int(total_unique * share), "country": country, "country_iso": iso}
            )
        countries.sort(key=lambda c: -c["cnt"])
        return {
            "countries": countries,
            "countries_tlh": countries_tlh,
            "unique": unique,
            "days": days,
            "total_sessions": total_sessions,
            "total_unique": total_unique,
            "total_tlh": int(total_sessions * 0.7),
        }

    def item_at(self, moment: float) -> LibraryItem:
        return self.programme.at(moment).item
