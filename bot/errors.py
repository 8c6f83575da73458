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
