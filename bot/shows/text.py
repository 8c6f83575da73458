"""What OnAir writes where people see a station's shows outside messages: a voice channel's
status, a stage's topic, a Scheduled Event's name, place and description. Station text is
untrusted: one line, no control or format characters, cut to Discord's limit for the field."""

from __future__ import annotations

from ..station import Play
from ..util.i18n import ENGLISH, N_, Lang
from ..util.links import EVENT_LOCATION, safe_url
from ..util.text import clip, one_line, safe

VOICE_STATUS_MAX = 500  # Discord: a voice channel's status
STAGE_TOPIC_MAX = 120  # Discord: a stage instance's topic (at least 1)
EVENT_NAME_MAX = 100
EVENT_DESCRIPTION_MAX = 1000
EVENT_LOCATION_MAX = EVENT_LOCATION
MUSIC, LIVE = "🎵", N_("🔴 LIVE:")


def voice_status(play: Play | None, lang: Lang = ENGLISH) -> str | None:
    """ "🎵 Artist - Title", or "🔴 LIVE: <show>" during a live show (the badge in the guild's
    ``lang``: the status is public); None when nothing plays. The status renders markdown, so
    station text is escaped (and no mention can form)."""
    if play is None:
        return None
    prefix = lang.t(LIVE) if play.live else MUSIC
    text = safe(play.display, limit=VOICE_STATUS_MAX - len(prefix) - 1)
    return f"{prefix} {text}" if text else None


def stage_topic(play: Play | None, lang: Lang = ENGLISH) -> str | None:
    """The same line for a stage's topic (plain text, 1-120 characters)."""
    if play is None:
        return None
    prefix = lang.t(LIVE) if play.live else MUSIC
    text = one_line(play.display, STAGE_TOPIC_MAX - len(prefix) - 1)
    return f"{prefix} {text}" if text else None


def event_name(play: Play, lang: Lang = ENGLISH) -> str:
    """A live show's event name: its title (1-100 characters). Events are public: ``lang`` is
    the guild's."""
    return one_line(play.display, EVENT_NAME_MAX) or lang.t("Live show")


def event_location(station_name: str | None, listen: str | None, lang: Lang = ENGLISH) -> str:
    """Where an external event happens: the station's https listen link when it is a URL
    Discord accepts and fits (Discord shows the place as a link), else its name."""
    link = safe_url(listen, EVENT_LOCATION_MAX, https_only=True)
    if link is not None:
        return link
    return one_line(station_name, EVENT_LOCATION_MAX) or one_line(
        lang.t("Online radio"), EVENT_LOCATION_MAX
    )


def event_description(station_name: str | None, play: Play, lang: Lang = ENGLISH) -> str:
    """Markdown is rendered in an event's description: station text is escaped."""
    station = safe(station_name, limit=200, fallback=lang.t("the station"))
    show = safe(play.display, limit=300)
    text = lang.t(
        "{show} live on {station}. Tune in with `/join` or `/listen`.", show=show, station=station
    )
    return clip(text, EVENT_DESCRIPTION_MAX)
