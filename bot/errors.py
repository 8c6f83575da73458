"""Errors the bot shows to users: each message is polite, specific and safe to show as is."""

from __future__ import annotations

import re

from babel.lists import format_list

from .station import (
    Problem,
    RequestRefused,
    RequestsOff,
    StationAuthError,
    StationError,
    StationNotFound,
    StationRefused,
    StationUnavailable,
)
from .station.errors import NotOffered, RequestsUnavailable
from .station.source import KIND_NAMES
from .util.i18n import ENGLISH, N_, Lang


class OnAirError(Exception):
    """A problem with what the user asked for (not with OnAir or the station). Raised as
    ``BadInput(errors.TEXT, station=name)``: the English text and its values apart, so the
    reply can be said in the user's language (:meth:`said_in`)."""

    def __init__(self, *args: object, **values: object) -> None:
        super().__init__(*args)
        self.values = values

    def __str__(self) -> str:
        return self.message

    @property
    def message(self) -> str:
        return self.said_in(ENGLISH)

    def said_in(self, lang: Lang) -> str:
        text = str(self.args[0]) if self.args else "That did not work."
        if not self.values:
            return lang.t(text)
        return lang.t(text, **_said(self.values, lang))


class Said:
    """A value of an error message that is itself said in the reader's language."""

    def said_in(self, lang: Lang) -> str:
        raise NotImplementedError


def _said(values: dict[str, object], lang: Lang) -> dict[str, object]:
    """A message's values with each :class:`Said` one said in ``lang``."""
    return {k: v.said_in(lang) if isinstance(v, Said) else v for k, v in values.items()}


class Note(Said):
    """A line said after an answer (a join's stage note), in the reader's language."""

    def __init__(self, text: str, /, **values: object) -> None:
        self.text = text
        self.values = values

    def said_in(self, lang: Lang) -> str:
        return lang.t(self.text, **_said(self.values, lang))


class Reason(Said):
    """Why something was refused, said inside another sentence ("… cannot be used: {reason}.")
    in the reader's language: an error (its own values said too) or a marked text with its
    values; the final full stop is left to the sentence around it."""

    def __init__(self, text: OnAirError | str, /, **values: object) -> None:
        self.text = text
        self.values = values

    def said_in(self, lang: Lang) -> str:
        if isinstance(self.text, OnAirError):
            return self.text.said_in(lang).rstrip(".")
        return lang.t(self.text, **_said(self.values, lang)).rstrip(".")

    def __str__(self) -> str:
        return self.said_in(ENGLISH)


class Formatted(Note):
    """A message always formatted, even without values (its literal braces are doubled):
    why a template is refused."""

    def said_in(self, lang: Lang) -> str:
        return lang.t(self.text).format(**_said(self.values, lang))


class Number(Said):
    """A count said as the reader's language writes numbers ("2,000", "2.000")."""

    def __init__(self, n: int) -> None:
        self.n = n

    def said_in(self, lang: Lang) -> str:
        return lang.number(self.n)


class PermissionNames(Said):
    """Permissions OnAir lacks, named as Discord's client names them in the reader's language
    ("the **Connect** permission", "die Berechtigung **Verbinden**")."""

    def __init__(self, names: list[str]) -> None:
        self.names = tuple(names)

    def said_in(self, lang: Lang) -> str:
        joined = format_list([lang.t(name) for name in self.names], locale=lang.locale)
        return lang.tn(
            "**{names}** permission", "**{names}** permissions", len(self.names), names=joined
        )


class TryAgainIn(Said):
    """ "Try again in N minutes.", in the plural form the reader's language needs."""

    def __init__(self, minutes: int) -> None:
        self.minutes = minutes

    def said_in(self, lang: Lang) -> str:
        n = self.minutes
        return lang.tn(
            "Try again in {count} minute.", "Try again in {count} minutes.", n, count=lang.number(n)
        )


class UnknownStation(OnAirError):
    pass


class BadInput(OnAirError):
    pass


class VoiceRefused(OnAirError):
    """Voice cannot play what was asked (no channel, permission, stream, FFmpeg)."""


# Every text a user sees when something fails, in one table (the command layer's one error
# handler, bot.runtime.core.user_message, and the setup commands read them from here). One
# wording per situation: a refused key reads the same in /nowplaying as when an admin adds the
# station.
GENERIC_ERROR = N_(
    "Sorry, something went wrong on OnAir's side. It has been logged; please try again."
)
STATION_KEY_REFUSED = N_("The station refused the API key; a server admin needs to check it.")
STATION_NOT_FOUND = N_(
    "The station server does not know this station id; a server admin needs to check it."
)
STATION_UNAVAILABLE = N_("The station is not answering right now. Please try again in a minute.")
STATION_UNREADABLE = N_("The station sent something OnAir could not read. Please try again later.")
# `onair check` / `onair watch` with no key at all, refused by the station: the owner gave none.
CLI_NO_KEY = (
    "the station wants an API key and none was given: add --key - (typed at a prompt that does "
    "not echo it) or set ONAIR_STATION_KEY (in the environment or in .env)"
)
# `onair check` / `onair watch` with a key the station refused: the one who runs them is the one
# who gave the key, so the line says where it came from instead of sending them to an admin.
CLI_KEY_REFUSED = (
    "the station refused the API key {source}: put the station's API key there (from its "
    "RadioBOSS Cloud account, or ask the station's host)"
)
CLI_KEY_FROM_OPTION = "given with --key"
CLI_KEY_FROM_PROMPT = "typed at the prompt of --key -"
CLI_KEY_FROM_ENV = "in ONAIR_STATION_KEY (the environment or .env)"


def cli_key_refused(key: str | None, source: str) -> str:
    """The line for a key the station refused; with no key nothing was sent, so none was refused."""
    return CLI_KEY_REFUSED.format(source=source) if key else CLI_NO_KEY


NOT_HERE = N_("You can't use this command here.")
# A value discord.py could not turn into what the option asks for (a channel OnAir cannot see).
BAD_VALUE = N_("That value doesn't work here: {value}")
NEED_MANAGE = N_("You need the **Manage Server** permission to change OnAir's settings here.")
UNKNOWN_LANGUAGE = N_(
    "OnAir doesn't speak that language, so nothing was changed. Pick one of the choices: "
    "{languages}."
)
NOT_YOUR_FORM = N_(
    "This form was opened by someone else (or in another server); "
    "run `/onair station add` yourself to add a station."
)
NOT_A_MEMBER = N_(
    "OnAir is not a member of this server (only its commands were installed), so it cannot "
    "announce here or keep a station for it. Please invite the bot to the server first."
)
NO_SECRET = N_(
    "This OnAir host has no encryption secret set, so it cannot store station keys "
    "safely. Please ask the bot's owner to set ONAIR_SECRET_KEY."
)
STATION_LIMIT = N_(
    "This server already has {count} stations, the most OnAir keeps for one "
    "server; remove one with `/onair station remove` first."
)
ADD_FAILED = N_("I could not add the station: {reason}")
BAD_KEY = N_(
    "That API key {problem}, so no request can carry it. Please copy the key again from the "
    "station's RadioBOSS Cloud settings and run `/onair station add` once more."
)
NOT_OURS = N_("That station comes from the bot's own configuration; only its owner can remove it.")
NO_EVERYONE = N_("OnAir never pings @everyone; pick a role of its own.")
CANNOT_POST = N_("I can't post embeds in {channel}; let me Send Messages and Embed Links there.")


# Voice (/join, /leave, /onair voice, the "Play in" button).
VOICE_UNAVAILABLE = N_(
    "Voice is not available on this bot: its owner has not set up FFmpeg. "
    "The other commands work as usual."
)
JOIN_NO_CHANNEL = N_(
    "Join a voice or stage channel first, then run `/join` (I play where you are)."
)
# Discord's permission names, as its client shows them in a channel's permissions.
VIEW_CHANNEL, CONNECT, SPEAK = N_("View Channel"), N_("Connect"), N_("Speak")
JOIN_NO_PERMISSION = N_(
    "I can't play in {channel}: I am missing the {missing} there. "
    "Please ask a server admin to allow it."
)
STAGE_ASKED = N_("I asked to speak on {channel}: a stage moderator can invite me up to be heard.")
STAGE_CANNOT_SPEAK = N_(
    "I can't speak on the stage {channel}: please make me a stage moderator "
    "(**Mute Members**) or allow me to **Request to Speak** there."
)
STATION_NO_VOICE = N_("**{station}** is not played in voice by this bot (its owner turned it off).")
GUILD_STATION_NO_VOICE = N_(
    "**{station}** is not played in voice yet: a server admin can turn it on with "
    "`/onair voice station:`."
)
NO_STREAM = N_("**{station}** does not name a stream I may play. Please ask a server admin.")
STREAM_UNREACHABLE = N_(
    "I can't reach **{station}**'s stream right now. Please try again in a minute."
)
VOICE_CONNECT_FAILED = N_("I could not connect to {channel} in time. Please try again in a minute.")
NOT_IN_VOICE = N_("I'm not playing in a voice channel here.")
NOT_A_VOICE_CHANNEL = N_("Pick a voice or stage channel from the list (or none).")
STREAM_URL_NEEDS_STATION = N_(
    "Pick the `station` this stream address is for (a station this server added)."
)
STREAM_URL_CONFIG_STATION = N_(
    "**{station}** comes from the bot's own configuration, so its stream address is the bot "
    "owner's setting (`stream_url` in config.toml), not this server's. Ask the bot's owner to "
    "change it; or add the station to this server with `/onair station add`, and then set the "
    "stream of that one with `/onair voice station:… stream_url:…`."
)
BAD_STREAM_URL = N_(
    "That stream address cannot be used: {reason}. Give the station's stream URL, like "
    "https://c5.radioboss.fm/stream, or `default` for its best listen link."
)
STREAM_URL_UNPLAYABLE = N_("I did not save that stream address: {reason}")
NO_STATUS_PERMISSION = N_(
    "I'm missing the **Set Voice Channel Status** permission in {channel}, so its status stays "
    "as it is until a server admin allows it."
)
EVENTS_NO_PERMISSION = N_(
    "I need the **Create Events** permission in this server to make events for live shows "
    "(**Manage Events** alone is not enough). Please ask a server admin to allow it, then run "
    "this again."
)
EVENTS_PERMISSION_MISSING = N_(
    "I'm missing the **Create Events** permission in this server (**Manage Events** alone is not "
    "enough), so no event is made for a live show until a server admin allows it."
)
RANGE_TOO_LONG = N_(
    "That range is {days} days; the most is {most}. Ask for a shorter one, for example "
    "`from:{first} to:{last}` (the last {most} days up to your `to`), or a `period`."
)
STREAM_GONE = N_(
    "The station no longer lists that stream. Run `/listen` again to see what it offers now."
)
REBROADCAST_TERMS = N_(
    "OnAir plays the station's public stream in this server's voice channels, and counts as "
    "one listener at the station however many listen here. Please make sure the station's owner "
    "allows relaying: some stations' terms forbid it."
)


# What a failed station call was, one sentence per problem (the add flow's detail after the
# summary above, `onair check` and `onair watch`); {server} is a host and port, never a URL.
STATION_DETAILS: dict[Problem, str] = {
    Problem.UNREACHABLE: N_("The station could not be reached."),
    Problem.NOT_OFFERED: N_("This station's host does not offer that."),
    Problem.KEY_REFUSED: STATION_KEY_REFUSED,
    Problem.UNKNOWN_STATION: STATION_NOT_FOUND,
    Problem.NO_PLAYLIST: N_("The station server knows neither playlist path for this station."),
    Problem.NOT_ANSWERING: STATION_UNAVAILABLE,
    Problem.TIMEOUT: N_("The station server {server} did not answer in time."),
    Problem.HOST_NOT_FOUND: N_("OnAir could not find the server {host}; check the base URL."),
    Problem.TLS_UNTRUSTED: N_(
        "The secure connection to {server} failed: its TLS certificate is not trusted "
        "(expired, self-signed or for another name)."
    ),
    Problem.TLS_FAILED: N_(
        "The secure connection to {server} failed (TLS error); check the base URL."
    ),
    Problem.CONNECTION_REFUSED: N_(
        "The station server {server} refused the connection; is it running on that port?"
    ),
    Problem.CONNECT_FAILED: N_("OnAir could not connect to the station server {server}."),
    Problem.CLOSED: N_("The station server {server} closed the connection without answering."),
    Problem.RATE_LIMITED: N_("The station is rate limiting OnAir; try again later."),
    Problem.REJECTED: N_("The station rejected the request (HTTP {status}); check the base URL."),
    Problem.ERROR_ANSWER: N_("The station answered with an error instead of data."),
    Problem.UNREADABLE: N_("The station sent an answer OnAir cannot read."),
    Problem.TOO_LARGE: N_("The station's answer is too large to be station data."),
    Problem.EMPTY: N_("The station sent an empty answer; try again later."),
    Problem.NOT_JSON: N_("The station's answer is not valid JSON; check the base URL."),
    Problem.NOT_OBJECT: N_("The station's answer is not a JSON object; check the base URL."),
    Problem.BAD_VALUES: N_("The station sent values OnAir cannot read."),
    Problem.TOO_MANY_REDIRECTS: N_("The station redirected too many times."),
    Problem.NOT_CONTACTED: N_("OnAir does not contact this station's address."),
    Problem.NO_LONGER_CONTACTED: N_("OnAir no longer contacts this station's server: {why}"),
    Problem.REDIRECT_REFUSED: N_("The station redirected to an address OnAir does not contact."),
    Problem.INTERNAL_ADDRESS: N_(
        "The station server {server} is at an address OnAir does not contact."
    ),
    Problem.REQUESTS_UNAVAILABLE: N_(
        "Song requests are unavailable right now; try again in a little while."
    ),
    Problem.REQUESTS_OFF: N_("This station is not taking song requests right now."),
    Problem.REQUEST_REFUSED: N_("The station did not accept the request: {reason}"),
}
# A part of an answer that is not the object expected (``what``, as the parser names it).
_WRONG_SHAPES = {
    "station info": N_("The station sent station info that is not a JSON object."),
    "statistics": N_("The station sent statistics that is not a JSON object."),
    "a playlist": N_("The station sent a playlist that is not a JSON object."),
}
_REQUEST_REFUSED_PLAIN = N_("The station did not accept the request.")
# What a station's host does not offer (``NotOffered``), one line per feature (``what``);
# {host} is the host's product name (RadioBOSS Cloud, AzuraCast, Icecast, Shoutcast).
NOT_OFFERED_LINES = {
    "playlist": N_("{host} servers do not publish a playlist, so there is none to show."),
    "stats": N_("{host} servers do not keep listener statistics, so there are none to show."),
    "requests": N_("{host} servers do not take song requests."),
    "schedule": N_("{host} servers do not publish a schedule of shows."),
}


def station_detail(error: StationError, lang: Lang = ENGLISH) -> str:
    """What went wrong, as one sentence in ``lang`` (its server, status or reason named)."""
    text = STATION_DETAILS.get(error.problem, STATION_DETAILS[Problem.UNREACHABLE])
    if error.problem is Problem.NOT_OFFERED:
        return _not_offered(error, lang)
    if error.problem is Problem.WRONG_SHAPE:
        text = _WRONG_SHAPES.get(str(error.values.get("what")), STATION_DETAILS[Problem.UNREADABLE])
    elif error.problem is Problem.REQUEST_REFUSED and not error.values.get("reason"):
        text = _REQUEST_REFUSED_PLAIN
    values = {
        k: v.said_in(lang) if isinstance(v, OnAirError) else v for k, v in error.values.items()
    }
    try:
        return lang.t(text).format(**values)
    except (KeyError, IndexError):  # a value the sentence names is missing: its summary
        return _summary(error, lang)


def _not_offered(error: StationError, lang: Lang) -> str:
    """One line naming the host's kind and what it lacks (the general line when either is
    unknown)."""
    host = KIND_NAMES.get(str(error.values.get("kind")))
    line = NOT_OFFERED_LINES.get(str(error.values.get("what")))
    if host is None or line is None:
        return lang.t(STATION_DETAILS[Problem.NOT_OFFERED])
    return lang.t(line, host=host)


def _summary(error: StationError, lang: Lang) -> str:
    """What a listener needs to know of a failed call: its kind, and what to do."""
    if isinstance(error, StationAuthError):
        return lang.t(STATION_KEY_REFUSED)
    if isinstance(error, StationNotFound):
        return lang.t(STATION_NOT_FOUND)
    if isinstance(error, StationUnavailable):
        return lang.t(STATION_UNAVAILABLE)
    return lang.t(STATION_UNREADABLE)


def station_problem(error: StationError, *, detail: bool = False, lang: Lang = ENGLISH) -> str:
    """The text for a failed station call, in ``lang``. ``detail`` adds what the client saw
    when it says more than its kind (the add flow: the admin has just typed the address and
    the id)."""
    if isinstance(error, StationAuthError | StationNotFound):
        return _summary(error, lang)
    if isinstance(
        error, RequestsUnavailable | RequestsOff | RequestRefused | StationRefused | NotOffered
    ):
        return station_detail(error, lang)  # a whole sentence of its own: nothing to add
    if isinstance(error, StationUnavailable) and (
        not detail or error.problem is Problem.NOT_ANSWERING
    ):
        return _summary(error, lang)
    return f"{_summary(error, lang)} ({station_detail(error, lang)})"


# /onair station add: what `station_id` is for each kind of host, when it is not that.
STATION_REF_EXPECTED = {
    "radioboss": N_(
        "That `station_id` is not a station number: for RadioBOSS Cloud it is the station's "
        "number, like `123`."
    ),
    "azuracast": N_(
        "That `station_id` is not an AzuraCast station: give its short name or number, like "
        "`my_radio`."
    ),
    "icecast": N_(
        "That `station_id` is not an Icecast mount: give the mount, starting with a slash, like "
        "`/live`."
    ),
    "shoutcast": N_(
        "That `station_id` is not a Shoutcast stream: give its stream id (sid), like `1`."
    ),
}
KIND_NOT_READ = N_("This OnAir cannot read {host} stations yet; ask the bot's owner.")


# Live and offline alerts, weekly recap (/onair alerts, /onair recap).
CANNOT_MENTION = N_(
    "I can't ping {role}: it is not mentionable and I lack **Mention @everyone, @here and All "
    "Roles** in {channel}. Make the role mentionable, or pick another (or none)."
)
ALERTS_NEED_CHANNEL = N_("Pick the `channel` for the alerts (or set `off:True` to stop them).")
RECAP_NEED_CHANNEL = N_("Pick the `channel` for the weekly recap (or set `off:True` to stop it).")


# Community: announcement templates and likes (/onair template, the ❤ button, /top).
BAD_TEMPLATE = N_("I did not save that: {problem}.")
NO_TEMPLATE_TARGET = N_(
    "{channel} has no announcements of **{station}** yet: set them up with `/onair announce` "
    "first, then word them with `/onair template set`."
)
TEMPLATE_NOTHING_GIVEN = N_(
    "Give at least one part to set: content, title, description, footer or color."
)
# Why a template is refused (after "I did not save that: "); the formatter fills them in. Each
# is always formatted (a :class:`Formatted`), so a literal brace is written doubled here.
TEMPLATE_FORMAT_SPEC = N_(
    "`{{{shown}}}` has a `:` after the name, and templates cannot change how a value is "
    "laid out; write `{{{name}}}` alone"
)
TEMPLATE_CONVERSION = N_(
    "`{{{shown}}}` has a `!` after the name, and templates cannot change how a value is "
    "shown; write `{{{name}}}` alone"
)
TEMPLATE_REACHES_IN = N_("`{{{shown}}}` reaches into a value (`.` or `[`); write `{{{name}}}`")
TEMPLATE_EMPTY_NAME = N_(
    "`{{}}` names nothing; write a name like `{{title}}` (or `{{{{` for a brace)"
)
TEMPLATE_UNKNOWN_NAME = N_("`{{{shown}}}` is not a name OnAir knows; use one of {names}")
TEMPLATE_UNCLOSED = N_("a `{{` is never closed; write `{{{{` for a literal brace")
TEMPLATE_NESTED = N_(
    "braces cannot nest (`{{` inside `{{…}}`); write `{{{{` and `}}}}` for literal braces"
)
TEMPLATE_LONE_CLOSE = N_("a `}}` has no `{{`; write `}}}}` for a literal brace")
TEMPLATE_TOO_MANY = N_("more than {count} placeholders")
TEMPLATE_TOO_LONG = N_("the template is {length} characters long; at most {limit}")
TEMPLATE_PART_TOO_LONG = N_("the {part} template is {length} characters long; at most {limit}")
TEMPLATE_FALLBACK_TOO_LONG = N_(
    "the fallback of `{{{name}|…}}` is {length} characters; at most {limit}"
)
TEMPLATE_BAD_COLOUR = N_("the color must be a hex colour like #1DB954, not `{text}`")
TEMPLATE_IN_PART = N_("the {part} template: {problem}")
TEMPLATE_NOT_A_PART = N_("`{part}` is not a part; use one of {parts}")
TEMPLATE_NOT_TEXT = N_("the {part} must be text")
LIKE_TOO_FAST = N_("You're liking quickly! Please wait a few seconds and try again.")


# Song requests (/request, /requests, /onair requests). {station} and {text} arrive made safe.
REQUESTS_NOT_OFFERED = N_(
    "**{station}** doesn't take song requests through OnAir. (The bot's owner turns them on "
    "with `requests = true` for the station.)"
)
REQUESTS_OFF_HERE = N_("Song requests for **{station}** are off in this server.")
VOTES_NEED_REQUESTS = N_(
    "Song votes need song requests, and **{station}** doesn't take them through OnAir."
)
VOTES_REQUESTS_OFF = N_(
    "Song votes need song requests: turn them on for **{station}** with `/onair requests` first."
)
VOTE_TIMES = N_(
    "A vote runs every {low} to {high} minutes and lasts {shortest} to {longest} minutes, "
    "less than the time between two votes."
)
VOTE_NEED_CHANNEL = N_("Choose the channel for the song votes.")
VOTE_NO_POLLS = N_("I can't post polls in {channel}: I need the **Create Polls** permission there.")
REQUESTS_STATION_OFF = N_("**{station}** is not taking song requests right now.")
REQUEST_NEED_ROLE = N_("Only members with the {role} role can request songs here.")
REQUEST_COOLDOWN = N_("You've requested a song recently. You can ask again {when}.")
REQUEST_CAP = N_(
    "This server has had its {cap} song requests for this hour. Requests open again {when}."
)
REQUEST_NO_MATCH = N_(
    "No song on **{station}** matches “{text}”, so nothing was requested. Type at least 3 "
    "characters and pick one of the suggestions."
)
REQUEST_PICK_ONE = N_(
    "{count} songs on **{station}** match “{text}”, so nothing was requested yet: pick one of "
    "the suggestions."
)
REQUEST_REFUSED_QUOTED = N_("**{station}** didn't accept the request. Its reason: “{reason}”")
REQUEST_REFUSED_NO_REASON = N_("**{station}** didn't accept the request: it gave no reason.")
# The reasons stations give (the field notes), said in the reader's language with what to do.
REQUEST_ALREADY_QUEUED = N_(
    "This song is already waiting in **{station}**'s requests. Try another song."
)
REQUEST_PLAYED_RECENTLY = N_(
    "**{station}** played this song recently, so it can't be requested yet. Try another song."
)
REQUEST_STATION_LIMIT = N_("**{station}** has taken all the requests it allows for now. {retry}")
TRY_AGAIN_LATER = N_("Try again later.")
REQUESTS_OWN_STATION = N_(
    "Requests can only be turned on here for **{station}** by the bot's owner "
    "(`requests = true` in its config)."
)


# How stations word the refusals the field notes list (English, as their widgets send them).
_ALREADY = re.compile(r"\balready\b.*\b(request|queue)|\b(request|queue)\w*\b.*\balready\b", re.I)
_RECENT = re.compile(r"\brecent(ly)?\b|\btoo soon\b", re.I)
_LIMIT = re.compile(r"\blimit|\btoo many\b|\bmaximum\b|\bper (hour|day)\b|\bwait\b", re.I)
_OFF = re.compile(r"\b(disabled|turned off|switched off|not (accepting|taking))\b", re.I)
_MINUTES = re.compile(r"\b(\d{1,4})\s*(min|minute|minutes|mins)\b", re.I)


def request_refused(station: str, reason: str | None) -> BadInput:
    """A station's refusal for the listener: a reason the field notes list (already requested,
    played recently, a limit reached, requests off) in the reader's language, ending with what
    to do; any other quoted as the station's own words. ``station`` and ``reason`` arrive made
    safe (markdown escaped, bounded, one line)."""
    if not reason:
        return BadInput(REQUEST_REFUSED_NO_REASON, station=station)
    if _OFF.search(reason):
        return BadInput(REQUESTS_STATION_OFF, station=station)
    if _LIMIT.search(reason):
        minutes = _MINUTES.search(reason)
        retry: Said = TryAgainIn(int(minutes.group(1))) if minutes else Note(TRY_AGAIN_LATER)
        return BadInput(REQUEST_STATION_LIMIT, station=station, retry=retry)
    if _ALREADY.search(reason):
        return BadInput(REQUEST_ALREADY_QUEUED, station=station)
    if _RECENT.search(reason):
        return BadInput(REQUEST_PLAYED_RECENTLY, station=station)
    return BadInput(REQUEST_REFUSED_QUOTED, station=station, reason=reason)
