"""What OnAir writes where people see a station's shows outside messages: a voice channel's
status, a stage's topic, a Scheduled Event's name, place and description. Station text is
untrusted: one line, no control or format characters, cut to Discord's limit for the field."""

from __future__ import annotations

from collections.abc import Callable

from ..station import Play
from ..util.i18n import ENGLISH, N_, Lang
from ..util.links import EVENT_LOCATION, safe_url
from ..util.text import clip, one_line, safe

VOICE_STATUS_MAX = 500  # Discord: a voice channel's status
STAGE_TOPIC_MAX = 120  # Discord: a stage instance's topic (at least 1)
EVENT_NAME_MAX = 100
EVENT_DESCRIPTION_MAX = 1000
EVENT_LOCATION_MAX = EVENT_LOCATION
MUSIC = "🎵 {show}"
LIVE = N_("🔴 LIVE: {show}")  # in the guild's language: "🔴 AO VIVO: {show}"


def voice_status(play: Play | None, lang: Lang = ENGLISH) -> str | None:
    """ "🎵 Artist - Title", or "🔴 LIVE: <show>" during a live show; None when nothing plays.
    The status renders markdown, so station text is escaped (and no mention can form)."""
    return _line(play, lang, lambda text, room: safe(text, limit=room), VOICE_STATUS_MAX)


def stage_topic(play: Play | None, lang: Lang = ENGLISH) -> str | None:
    """The same line for a stage's topic (plain text, 1-120 characters)."""
    return _line(play, lang, one_line, STAGE_TOPIC_MAX)


def _line(play: Play | None, lang: Lang, cut: Callable[[str, int], str], limit: int) -> str | None:
    """The play in the line's words (the live one in ``lang``), its station text cut so the
    whole line fits ``limit``."""
    if play is None:
        return None
    line = lang.t(LIVE) if play.live else MUSIC
    text = cut(play.display, limit - len(line.replace("{show}", "")))
    return line.replace("{show}", text) if text else None


def event_name(play: Play) -> str:
    """A live show's event name: its title (1-100 characters)."""
    return one_line(play.display, EVENT_NAME_MAX) or "Live show"


def event_location(station_name: str | None, listen: str | None) -> str:
    """Where an external event happens: the station's https listen link when it is a URL
    Discord accepts and fits (Discord shows the place as a link), else its name."""
    link = safe_url(listen, EVENT_LOCATION_MAX, https_only=True)
    if link is not None:
        return link
    return one_line(station_name, EVENT_LOCATION_MAX) or "Online radio"


def event_description(station_name: str | None, play: Play) -> str:
    """Markdown is rendered in an event's description: station text is escaped."""
    station = safe(station_name, limit=200, fallback="the station")
    show = safe(play.display, limit=300)
    return clip(f"{show} live on {station}. Tune in with `/join` or `/listen`.", 1000)
