"""Voice figures over the guilds' players: what plays, who listens, frames sent, decoder
restarts (``/stats``, the metrics endpoint, tests). Counted on demand, never stored."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

import discord

from .players import AudioHub, Player, listeners_in

if TYPE_CHECKING:
    from ..util.metrics import Metrics


class VoiceFigures:
    """Figures of ``players`` (the service's live map) in the channels ``client`` sees."""

    def __init__(
        self, client: discord.Client, players: Mapping[int, Player], hub: AudioHub | None
    ) -> None:
        self.client = client
        self.players = players
        self.hub = hub
        self._frames_retired = 0  # frames sent by players that have stopped

    def listeners(self, guild_id: int) -> int:
        """Members who are not bots in the guild's player's channel."""
        player = self.players.get(guild_id)
        if player is None:
            return 0
        me = self.client.user
        return listeners_in(self._player_channel(player), me.id if me else 0)

    def _player_channel(self, player: Player) -> discord.abc.GuildChannel | None:
        guild = self.client.get_guild(player.guild_id)
        return guild.get_channel(player.channel_id) if guild is not None else None

    def playing(self, station: str) -> bool:
        return any(p.station == station for p in self.players.values())

    def listeners_by_station(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for guild_id, player in self.players.items():
            counts[player.station] += self.listeners(guild_id)
        return dict(counts)

    def frames_sent(self) -> int:
        """Frames every player sent since start-up (the engine's sources count them)."""
        playing = sum(_frames(p) for p in self.players.values())
        return self._frames_retired + playing

    def retire(self, player: Player | None) -> Player | None:
        """A player stopped: its frames still count in :meth:`frames_sent`."""
        if player is not None:
            self._frames_retired += _frames(player)
        return player

    def decoder_restarts(self) -> dict[str, int]:
        if self.hub is None:
            return {}
        return {key: int(getattr(s, "restarts", 0)) for key, s in self.hub.stats().items()}

    def register_metrics(self, metrics: Metrics) -> None:
        metrics.gauges["voice_guilds"] = lambda: len(self.players)
        metrics.gauges["voice_frames_sent"] = self.frames_sent
        metrics.labelled["voice_listeners"] = ("station", self.listeners_by_station)
        metrics.labelled["voice_decoder_restarts"] = ("station", self.decoder_restarts)


def _frames(player: Player) -> int:
    return int(getattr(player.audio, "frames_sent", 0))
