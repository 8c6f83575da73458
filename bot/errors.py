"""Errors the bot shows to users: each message is polite, specific and safe to show as is."""

from __future__ import annotations


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
# handler, bot.core.user_message, and the setup commands read them from here).
GENERIC_ERROR = "Sorry, something went wrong on OnAir's side. It has been logged; please try again."
STATION_KEY_REFUSED = "The station refused OnAir's API key. Please ask a server admin to check it."
STATION_NOT_FOUND = (
    "The station server does not know this station. Please ask a server admin to check its id."
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
