"""Console modes: ``onair watch`` and ``onair demo``, on the bot's own watcher and scheduler."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import textwrap
import time
from datetime import UTC, datetime, tzinfo
from typing import Any

import aiohttp
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from .. import errors
from ..announcer import Announcement, StationStatus, StationWatch, WatchScheduler
from ..announcer.watcher import AnnouncementListener, ErrorListener
from ..programme.jingles import is_jingle
from ..station import StationAuthError, StationError, StationNotFound
from ..station.hosts import source_class
from ..station.source import DEFAULT_KIND
from ..util import text
from ..util.text import duration

EXIT_STATION = 2  # as `onair check`: a station error that waiting will not fix

# A console line must stay on one line and print in any terminal: no control characters.
_CONTROL = dict.fromkeys([*list(range(0, 32)), 127], " ")


def announcement_json(announcement: Announcement, kind: str = DEFAULT_KIND) -> dict[str, Any]:
    """One play as `onair watch --json` prints it: the same keys for every kind of host, null
    where the host does not say (docs/hosts/index.md has the table)."""
    play, info = announcement.play, announcement.info
    return {
        "kind": kind,
        "detected_at": round(announcement.detected_at, 3),
        "title": play.title,
        "artist": play.artist,
        "album": play.album,
        "year": play.year,
        "started": play.started.isoformat() if play.started else None,
        "started_exact": play.started_exact,
        "duration": play.duration.total_seconds() if play.duration else None,
        "live": play.live,
        "artwork": info.artwork or info.links.station_logo,
        "listen": info.links.listen,
        "page": info.links.page,
        "listeners": info.listener_count,
        "next": info.next_display,
        "station": info.name,
    }


def _clean(value: str | None) -> str:
    return (value or "").translate(_CONTROL)


def announcement_line(announcement: Announcement) -> str:
    play = announcement.play
    when = datetime.fromtimestamp(announcement.detected_at, UTC).astimezone()
    badge = "LIVE" if play.live else "AutoDJ"
    return f"{when:%H:%M:%S}  [{badge}] {_clean(play.display)} ({duration(play.duration)})"


def announcement_card(announcement: Announcement, zone: tzinfo = UTC) -> str:
    """A readable terminal card, the console twin of the Discord embed."""
    play, info = announcement.play, announcement.info
    width = 64
    rule = "─" * (width - 2)
    badge = "● LIVE" if play.live else "♪ AutoDJ"
    lines = [f"{badge}  {_clean(info.name) or 'Station'}"]
    lines += textwrap.wrap(_clean(play.title), width - 4) or ["?"]
    if play.artist:
        lines.append(f"by {_clean(play.artist)}")
    if play.album:
        lines.append(
            f"from {_clean(play.album)}" + (f" ({_clean(play.year)})" if play.year else "")
        )
    started = play.started.astimezone(zone).strftime("%H:%M:%S") if play.started else "?"
    listeners = info.listener_count
    lines.append(
        f"length {duration(play.duration)}  ·  started {started}  ·  "
        f"listeners {listeners if listeners is not None else '?'}"
    )
    if info.next_display:
        lines.append(f"up next: {_clean(info.next_display)}"[: width - 4])
    if info.links.listen:
        lines.append(f"listen: {info.links.listen}"[: width - 4])
    body = "\n".join(f"│ {line[: width - 4]:<{width - 4}} │" for line in lines)
    return f"┌{rule}┐\n{body}\n└{rule}┘"


async def _run_until_stopped(stop: asyncio.Event, duration: float | None) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=duration)


async def watch_station(
    base_url: str,
    station_id: str,
    key: str | None,
    on_play: AnnouncementListener,
    on_error: ErrorListener,
    *,
    kind: str = DEFAULT_KIND,
    zone: tzinfo = UTC,
    duration: float | None = None,
    stop: asyncio.Event | None = None,
) -> StationStatus:
    """Watch one station with the bot's own watch and scheduler until stopped (a signal, ``stop``
    set, or ``duration``)."""
    stop = stop or asyncio.Event()
    scheduler = AsyncIOScheduler(timezone=UTC)
    async with aiohttp.ClientSession() as session:
        client = source_class(kind)(base_url, station_id, key, session=session, zone=zone)
        station_watch = StationWatch(client)
        station_watch.listeners.append(on_play)
        station_watch.error_listeners.append(on_error)
        scheduler.start()
        watches = WatchScheduler(scheduler)
        watches.add(station_watch)
        try:
            await _run_until_stopped(stop, duration)
        finally:
            scheduler.shutdown(wait=False)
            await watches.close()
    return station_watch.status


async def watch(
    base_url: str,
    station_id: str,
    key: str | None,
    *,
    kind: str = DEFAULT_KIND,
    zone: tzinfo = UTC,
    as_json: bool = False,
    duration: float | None = None,
    key_source: str = errors.CLI_KEY_FROM_ENV,
) -> int:
    """Print one line per new play until interrupted; errors go to stderr, one line each. A
    wrong key or an unknown station ends it with exit 2 (as ``check`` does); outages are waited
    out. ``key_source`` says where the key came from, for the line when it is refused."""
    stop = asyncio.Event()
    fatal = False

    async def on_play(announcement: Announcement) -> None:
        if as_json:
            line = json.dumps(announcement_json(announcement, kind), ensure_ascii=False)
        else:
            line = announcement_line(announcement)
        print(line, flush=True)

    async def on_error(error: StationError) -> None:
        nonlocal fatal
        message = errors.station_detail(error)
        if isinstance(error, StationAuthError):
            message = errors.cli_key_refused(key, key_source)
        print(f"onair watch: {message}", file=sys.stderr, flush=True)
        if isinstance(error, StationAuthError | StationNotFound):
            fatal = True
            stop.set()

    await watch_station(
        base_url,
        station_id,
        key,
        on_play,
        on_error,
        kind=kind,
        zone=zone,
        duration=duration,
        stop=stop,
    )
    return EXIT_STATION if fatal else 0


async def demo(*, duration: float = 60.0, seed: int = 7) -> int:
    """Offline demo: the simulator in-process with short tracks, watched and announced here."""
    from ..simulator import StationSimulator

    simulator = StationSimulator()
    # Songs report their library length: a song aired in 8 s is a song, with its link.
    simulator.add_station(
        1,
        key="demo-key",
        seed=seed,
        track_seconds=(5.0, 9.0),
        name="OnAir Demo FM",
        library_durations=True,
    )
    base = await simulator.start()
    print(f"OnAir demo: station simulator on {base}, tracks of 5-9 s, running {duration:.0f} s.")
    print(
        "Each card below is what OnAir announces in Discord when a new track starts.\n", flush=True
    )
    count = 0
    listener = DemoRequest(base)
    await listener.open()

    async def on_play(announcement: Announcement) -> None:
        nonlocal count
        play = announcement.play
        if not play.live and is_jingle(play.duration, ()):
            # As in Discord: a jingle gets no announcement of its own.
            print(f"  (jingle: {play.display}, {text.duration(play.duration)}; not announced)")
            return
        count += 1
        print(announcement_card(announcement), flush=True)
        await listener.song_link(announcement)
        await listener.after_play(announcement, count)

    async def on_error(error: StationError) -> None:
        print(f"(station error: {error.message})", file=sys.stderr, flush=True)

    try:
        status = await watch_station(base, "1", "demo-key", on_play, on_error, duration=duration)
    finally:
        await listener.close()
        await simulator.stop()
    requests = simulator.counters["info"]
    print(f"\n{count} announcements from {status.polls} polls ({requests} upstream info requests).")
    return 0


class DemoRequest:
    """The demo's listener: after the first announcement it requests a song through the
    station's request endpoints; the request is stored and credited as the bot does (the
    simulator plays it next), and the card of that play says who asked."""

    def __init__(self, base: str) -> None:
        self.base = base

    async def open(self) -> None:
        from ..songlinks import SongLinks
        from ..songsearch import SongSearch
        from ..storage import SqliteStorage

        self.session = aiohttp.ClientSession()
        self.storage = await SqliteStorage(":memory:").open()
        self.links = SongLinks(SongSearch(self.session, f"{self.base}/search"), self.storage)

    async def song_link(self, announcement: Announcement) -> None:
        """The "Find this song" link the post gets, from the simulator's song search."""
        link = await self.links.find_within(announcement.play, 3.0)
        if link is not None:
            print(f"  🔎 Find this song: {link.url}\n", flush=True)

    async def close(self) -> None:
        await self.session.close()
        await self.storage.close()

    async def after_play(self, announcement: Announcement, count: int) -> None:
        from ..requests.service import title_keys
        from ..station import RequestsClient, normalise_title
        from ..storage import NewRequest

        now = time.time()
        credits = await self.storage.credit_requests(
            "demo",
            title_keys(announcement.play),
            announcement.play.claim_key,
            since=now - 3600,
            now=now,
        )
        for credit in credits:
            print(f"  🙋 Requested by {credit.name}\n", flush=True)
        if count != 1:
            return
        client = RequestsClient(self.base, 1, session=self.session)
        try:
            found = await client.search("umbrella")
            track = found.tracks[0]
            await client.request(track.id)
        except (StationError, IndexError) as error:
            print(f"(the demo listener's request failed: {error})", flush=True)
            return
        asked = NewRequest(
            0, "demo", 1, "demo listener", track.id, track.title, normalise_title(track.title)
        )
        request_id = await self.storage.reserve_request(asked, now=now, cooldown=600, hourly_cap=30)
        if request_id is not None:
            await self.storage.request_accepted(request_id)
        print(
            f"(a listener types /request song:umbrella and picks {track.title!r}: accepted)\n",
            flush=True,
        )
