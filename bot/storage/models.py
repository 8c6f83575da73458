"""What storage holds, as frozen dataclasses (the rest of the code never sees rows)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..station import Play
from ..templates.model import TemplateSet
from ..templates.model import from_json as templates_from_json


@dataclass(frozen=True, slots=True)
class Subscription:
    id: int
    guild_id: int
    channel_id: int
    station: str
    mode: str = "post"
    mention_role: int = 0
    min_seconds: float = 0.0
    skip_item_types: tuple[str, ...] = ()
    skip_pattern: str = ""
    announce_live: bool = True
    paused_reason: str | None = None
    card_message_id: int | None = None
    last_play: Play | None = None
    style: str = ""  # compact | full | "" (by mode: post compact, card full)
    # The announcement's wording; None when stored: keep the stored templates (/onair announce).
    templates: TemplateSet | None = None


@dataclass(frozen=True, slots=True)
class Delivery:
    """A pending delivery of one recorded play (an announcement) to one subscription."""

    announcement_id: int
    subscription_id: int
    station: str
    play_key: str
    expires_at: float  # unix seconds; past it the play is stale and is not posted
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    started: datetime
    title: str
    artist: str | None
    album: str | None


def play_to_json(play: Play) -> str:
    return json.dumps(
        {
            "title": play.title,
            "artist": play.artist,
            "started": play.started.isoformat() if play.started else None,
            "exact": play.started_exact,
            "file": play.file,
        }
    )


def play_from_json(raw: str | None) -> Play | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
        started = datetime.fromisoformat(data["started"]) if data.get("started") else None
        return Play(
            title=data["title"],
            artist=data.get("artist"),
            started=started,
            started_exact=bool(data.get("exact")),
            file=data.get("file"),
        )
    except (ValueError, KeyError, TypeError):
        return None


SUB_COLUMNS = (
    "id, guild_id, channel_id, station, mode, mention_role, min_seconds, skip_item_types, "
    "skip_pattern, announce_live, paused_reason, card_message_id, last_play, style, templates"
)


def subscription_from_row(row: Sequence[Any]) -> Subscription:
    return Subscription(
        id=row[0],
        guild_id=row[1],
        channel_id=row[2],
        station=row[3],
        mode=row[4],
        mention_role=row[5],
        min_seconds=row[6],
        skip_item_types=tuple(json.loads(row[7] or "[]")),
        skip_pattern=row[8],
        announce_live=bool(row[9]),
        paused_reason=row[10],
        card_message_id=row[11],
        last_play=play_from_json(row[12]),
        style=row[13] or "",
        templates=templates_from_json(row[14]),
    )


@dataclass(frozen=True, slots=True)
class GuildStation:
    """A station a guild added itself; its key is stored encrypted (``key_cipher``)."""

    guild_id: int
    slug: str
    name: str
    base_url: str
    station_id: int | str  # its name on its host: a number, a shortcode or a mount (``kind``)
    key_cipher: bytes | None
    timezone: str = "UTC"
    voice: bool = False  # an admin opted in to playing it in voice (/onair voice station)
    stream_url: str = ""  # "" = the best listen link of its info
    kind: str = "radioboss"  # its host's kind (bot.station.source.KINDS)


@dataclass(frozen=True, slots=True)
class GuildSettings:
    guild_id: int
    timezone: str = "UTC"
    default_station: str = ""
    language: str = ""  # a catalog code (bot.util.i18n); "" = the guild's preferred locale
    song_links: bool = True  # announcements and /nowplaying show "Find this song"
    # Discord's preferred locale as the process serving the guild's shard last saw it ("" for
    # en-US or not seen): the language of public posts any process of a fleet makes.
    preferred_locale: str = ""


@dataclass(frozen=True, slots=True)
class SongLinkRow:
    """What storage knows of one song's search: ``found`` with the service's ``track_id`` (and
    artwork URL, "" for none), or not found, until ``expires_at`` (epoch seconds; 0: nothing
    known yet, only a claim)."""

    song_key: str
    found: bool
    track_id: int = 0
    artwork: str = ""
    expires_at: float = 0.0


# Seconds the player stays in a channel with no listener before it leaves (0 = stays).
LEAVE_WHEN_EMPTY = 300.0


@dataclass(frozen=True, slots=True)
class GuildVoice:
    """A guild's voice settings: the 24/7 home channel (0 = none), how long the player stays in
    a channel nobody listens in (0 = stays), the station the home channel plays, and whether OnAir
    may show what plays as its voice channel's status (or stage topic)."""

    guild_id: int
    home_channel: int = 0
    leave_when_empty: float = LEAVE_WHEN_EMPTY
    station: str = ""
    channel_status: bool = True  # OnAir shows what plays as the voice channel's status


@dataclass(frozen=True, slots=True)
class VoiceSession:
    """Where a guild's player is: rejoined on READY after a restart or a reconnect."""

    guild_id: int
    channel_id: int
    station: str


def history_entry(row: Sequence[Any]) -> HistoryEntry:
    return HistoryEntry(datetime.fromtimestamp(row[0], UTC), row[1], row[2], row[3])


@dataclass(frozen=True, slots=True)
class AlertSubscription:
    """A guild's live and offline alerts of one station: where they go, whom live shows ping."""

    guild_id: int
    station: str
    channel_id: int
    role_id: int = 0  # 0 = no ping


@dataclass(frozen=True, slots=True)
class AlertState:
    """What the alerts last knew of a station, kept in storage so that a restart or another
    process of a fleet taking the station over neither repeats nor forgets an alert."""

    live_key: str = ""  # the live show on air ('' = none)
    live_title: str = ""
    live_since: float | None = None
    # The show's end was posted when the station went down during it (offline_after): the
    # same airing coming back is not announced again, nor ended twice.
    live_ended: bool = False
    down_since: float | None = None  # first poll of the current outage (None = up)
    down_reason: str = ""
    down_posted: bool = False
    # Saves so far: a save is a compare-and-set on it, so two processes deciding from the same
    # stored state (a watch handed over mid-evaluation) cannot both record their alerts.
    version: int = 0


@dataclass(frozen=True, slots=True)
class RecapConfig:
    """A guild's weekly recap as wanted (a ``[[recaps]]`` entry of the config file, or an admin's
    choice): the channel, the station, the local weekday (0 = Monday) and hour."""

    guild_id: int
    channel_id: int
    station: str
    weekday: int
    hour: int


@dataclass(frozen=True, slots=True)
class Recap(RecapConfig):
    """A stored weekly recap: as configured, and when it was turned on (no slot before that is
    posted)."""

    since: float


@dataclass(frozen=True, slots=True)
class ScheduledPost:
    """A post recorded before it is sent (an alert, a recap): claimed by one process at a time."""

    key: str
    guild_id: int
    channel_id: int
    kind: str
    payload: str
    attempts: int
    created_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class WeekPlay:
    """One stored play as the weekly recap reads it."""

    started: datetime
    title: str
    artist: str | None
    listeners: int | None
    live: bool


@dataclass(frozen=True, slots=True)
class RequestSettings:
    """A guild's song-request rules (``/onair requests``): who may ask (a role; 0 = anyone),
    one request per user every ``cooldown`` seconds, at most ``hourly_cap`` requests an hour in
    the guild (0 = no cap), and the channel accepted requests are listed in (0 = none)."""

    guild_id: int
    role_id: int = 0
    cooldown: float = 600.0
    hourly_cap: int = 30
    channel_id: int = 0


@dataclass(frozen=True, slots=True)
class NewRequest:
    """A request about to be sent to the station (reserved first: the limits count it)."""

    guild_id: int
    station: str
    user_id: int
    display_name: str
    track_id: str
    title: str
    title_key: str
    ping: bool = False


VOTERS = 0  # the requester of a song vote's winner: the guild's listeners (no user has id 0)


@dataclass(frozen=True, slots=True)
class RequestCredit:
    """Who asked for a play: shown in that guild's announcement only (pinged when ``ping``).
    A song vote's winner is credited to ``VOTERS`` with the server's name."""

    guild_id: int
    user_id: int
    name: str
    ping: bool = False

    @property
    def voted(self) -> bool:
        return self.user_id == VOTERS


@dataclass(frozen=True, slots=True)
class SongVote:
    """A guild's song votes (``/onair vote``): a poll in ``channel_id`` of songs ``station``
    takes requests for, every ``every`` seconds from ``since``, open ``length`` seconds;
    ``paused_reason`` (English) while Discord refuses its polls for good: no slot is tried."""

    guild_id: int
    channel_id: int
    station: str
    every: float
    length: float
    since: float
    paused_reason: str | None = None


@dataclass(frozen=True, slots=True)
class VotePoll:
    """One slot's poll, claimed once for the whole fleet by its key: ``answers`` are
    (track id, title) in answer order (Discord numbers them from 1); ``state`` goes
    opening → open → closing → closed, the request made only by whoever closes it."""

    key: str
    guild_id: int
    channel_id: int
    station: str
    opens_at: float
    ends_at: float
    answers: tuple[tuple[str, str], ...]
    message_id: int = 0
    state: str = "opening"
    outcome: str = ""


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A listener's accepted request that has not aired yet."""

    title: str
    title_key: str
    requested_at: float
