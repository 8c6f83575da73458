"""discord.py's voice client, told why it closed.

discord.py 2.7.1 already handles the voice close codes itself (``VoiceConnectionState.
_poll_voice_ws``): 4015 (voice server crashed) resumes; 4014/4022 (disconnected, moved) waits
for a new voice server and reconnects, or disconnects when the main gateway said the bot left
the channel; 4006 (session no longer valid) and other codes reconnect from scratch with an
exponential backoff, for ever. What it does not do is come back after it gives up: a resume or
reconnect that times out, 4021 (rate limited), or a failed first handshake end in
``disconnect()`` and the player is gone. This client reports each final close to the voice
service with its cause, and the service rejoins with a backoff of its own, except after a
moderator's disconnect (or the channel's deletion): then the bot stays out.

Seen against the fake voice server: the 4015 resume sends op 4 for the channel the bot is in and
waits for both voice events, which do not both come while it is connected, so it times out after
the connect timeout; and after a 4006 reconnect the "left the channel" event stays set, so a
later 4014 is taken as final. Both end in ``disconnect()``, and the service's rejoin brings the
audio back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import discord

Closed = Callable[["OnAirVoiceClient"], None]
Moved = Callable[["OnAirVoiceClient"], None]


class OnAirVoiceClient(discord.VoiceClient):
    """A :class:`discord.VoiceClient` that says why it closed (``leaving``: OnAir left;
    ``kicked``: Discord said the bot left the channel without OnAir asking)."""

    on_closed: Closed | None = None
    on_moved: Moved | None = None

    def __init__(self, client: discord.Client, channel: discord.abc.Connectable) -> None:
        super().__init__(client, channel)
        self.leaving = False
        self.kicked = False
        self._reported = False

    async def on_voice_state_update(self, data: Any) -> None:
        before = getattr(self.channel, "id", None)
        # discord.py marks the leaves it starts itself (reconnects, give-ups) as expected; one
        # it did not expect came from outside: a moderator or a deleted channel.
        expected = getattr(self._connection, "_expecting_disconnect", False)
        if data.get("channel_id") is None and not self.leaving and not expected:
            self.kicked = True
        await super().on_voice_state_update(data)
        after = getattr(self.channel, "id", None)
        if after is not None and after != before and self.on_moved is not None:
            self.on_moved(self)

    def cleanup(self) -> None:
        super().cleanup()
        if not self._reported:
            self._reported = True
            if self.on_closed is not None:
                self.on_closed(self)


def voice_client_class(on_closed: Closed, on_moved: Moved) -> type[OnAirVoiceClient]:
    """A client class reporting to one service (discord.py builds ``cls(client, channel)``)."""
    return type(
        "BoundVoiceClient",
        (OnAirVoiceClient,),
        {"on_closed": staticmethod(on_closed), "on_moved": staticmethod(on_moved)},
    )
