"""Errors the bot shows to users: each message is polite, specific and safe to show as is."""

from __future__ import annotations

from .station import StationAuthError, StationError, StationNotFound, StationUnavailable


class OnAirError(Exception):
    """A problem with what the user asked for (not with OnAir or the station)."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else "That did not work."


class UnknownStation(OnAirError):
    pass


class BadInput(OnAirError):
    pass


# Every text a user sees when something fails, in one table (the command layer's one error
# handler, bot.core.user_message, and the setup commands read them from here). One wording per
# situation: a refused key reads the same in /nowplaying as when an admin adds the station.
GENERIC_ERROR = "Sorry, something went wrong on OnAir's side. It has been logged; please try again."
STATION_KEY_REFUSED = "The station refused the API key; a server admin needs to check it."
STATION_NOT_FOUND = (
    "The station server does not know this station id; a server admin needs to check it."
)
STATION_UNAVAILABLE = "The station is not answering right now. Please try again in a minute."
STATION_UNREADABLE = "The station sent something OnAir could not read. Please try again later."
NOT_HERE = "You can't use this command here."
NEED_MANAGE = "You need the **Manage Server** permission to change OnAir's settings here."
NOT_YOUR_FORM = (
    "This form was opened by someone else (or in another server); "
    "run `/onair station add` yourself to add a station."
)
NOT_A_MEMBER = (
    "OnAir is not a member of this server (only its commands were installed), so it cannot "
    "announce here or keep a station for it. Please invite the bot to the server first."
)
NO_SECRET = (
    "This OnAir host has no encryption secret set, so it cannot store station keys "
    "safely. Please ask the bot's owner to set ONAIR_SECRET_KEY."
)
STATION_LIMIT = (
    "This server already has {count} stations, the most OnAir keeps for one "
    "server; remove one with `/onair station remove` first."
)
ADD_FAILED = "I could not add the station: {reason}"
NOT_OURS = "That station comes from the bot's own configuration; only its owner can remove it."
NO_EVERYONE = "OnAir never pings @everyone; pick a role of its own."
CANNOT_POST = "I can't post embeds in {channel}; let me Send Messages and Embed Links there."


def station_problem(error: StationError, *, detail: bool = False) -> str:
    """The text for a failed station call. ``detail`` adds what the client saw when it says
    more than its kind (the add flow: the admin has just typed the address and the id)."""
    if isinstance(error, StationAuthError):
        return STATION_KEY_REFUSED
    if isinstance(error, StationNotFound):
        return STATION_NOT_FOUND
    if isinstance(error, StationUnavailable):
        if not detail or error.message == error.default_message:
            return STATION_UNAVAILABLE
        return f"{STATION_UNAVAILABLE} ({error.message})"
    return f"{STATION_UNREADABLE} ({error.message})"
