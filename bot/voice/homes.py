"""Where OnAir goes back to in voice: each stored session of this process's guilds on READY
(start-up, a gateway re-identify), each guild's 24/7 home channel, and the channel it was in
after a failure; ``Rejoins`` retries each attempt. A guild where someone stopped voice in this
run is held: no home channel until a /join, ``/onair voice`` or the next start."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

import discord

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import StationConfig
from ..errors import VoiceRefused
from ..storage import GuildVoice, Storage, VoiceSession
from .players import Player, VoiceChannel, listeners_in
from .rejoins import REJOIN_DELAYS, Rejoins

_LOGGER = logging.getLogger("onair.voice")


class HomeChannels:
    """The rejoin decisions of the voice service, which passes in what they need: ``players``
    (its live map), ``guild_voice``/``remember`` (its settings cache), ``present`` (a player,
    rejoin or connection in the guild), ``closing``, the two checks of a join, ``play``
    (connect and play, one connect per guild at a time) and ``played`` (after it plays)."""

    def __init__(
        self,
        client: discord.Client,
        registry: StationRegistry,
        storage: Storage,
        players: Mapping[int, Player],
        *,
        guild_voice: Callable[[int], GuildVoice],
        remember: Callable[[GuildVoice], None],
        present: Callable[[int], bool],
        closing: Callable[[], bool],
        check_can_play: Callable[[StationConfig], None],
        check_channel: Callable[[VoiceChannel], None],
        play: Callable[[VoiceChannel, StationConfig], Awaitable[object]],
        played: Callable[[int, int, str], None],
        delays: tuple[float, ...] = REJOIN_DELAYS,
    ) -> None:
        self.client = client
        self.registry = registry
        self.storage = storage
        self.players = players
        self._guild_voice = guild_voice
        self._remember = remember
        self._present = present
        self._closing = closing
        self._check_can_play = check_can_play
        self._check_channel = check_channel
        self._play = play
        self._played = played
        self.rejoins = Rejoins(self.rejoin_once, delays, shard_of=self._shard_of)
        # Guilds where someone stopped voice in this run (/leave, a moderator's disconnect): no
        # home channel rejoin until a /join, /onair voice or the next start.
        self.held: set[int] = set()

    async def rejoin_stored(self) -> None:
        """Rejoin each stored session of this process's guilds that has no live connection,
        then each home channel an admin has configured (``/onair voice channel``) in a guild
        with no session, unless the guild is held."""
        try:
            sessions = await self.storage.voice_sessions()
            # Read again, not the cached settings: another process may have changed them.
            homes = await self.storage.all_guild_voice()
        except Exception as error:
            if not self._closing():  # (closing: the bot stopped right after READY)
                _LOGGER.warning(
                    "could not read the stored voice sessions: %s", type(error).__name__
                )
            return
        # Listeners waiting first: the shard's turns go to them before the empty channels.
        sessions = sorted(sessions, key=lambda s: -self._listeners(s.guild_id, s.channel_id))
        for session in sessions:
            if self.client.get_guild(session.guild_id) is None:
                continue  # another shard's or process's guild, or the bot left it
            player = self.players.get(session.guild_id)
            if player is not None and player.client is not None and player.client.is_connected():
                continue
            if session.guild_id not in self.rejoins:
                self.rejoins.schedule(session, first_delay=0.0)
        stored = {session.guild_id for session in sessions}
        for voice in homes:
            self._remember(voice)
            guild_id = voice.guild_id
            if not voice.home_channel or guild_id in stored or guild_id in self.held:
                continue
            if self.client.get_guild(guild_id) is None or self._present(guild_id):
                continue
            station = self._home_station(voice)
            if station is not None:
                self.rejoins.schedule(
                    VoiceSession(guild_id, voice.home_channel, station.slug), first_delay=0.0
                )

    def _shard_of(self, guild_id: int) -> int:
        guild = self.client.get_guild(guild_id)
        return guild.shard_id if guild is not None else 0

    def _listeners(self, guild_id: int, channel_id: int) -> int:
        guild = self.client.get_guild(guild_id)
        channel = guild.get_channel(channel_id) if guild is not None else None
        me = self.client.user
        return listeners_in(channel, me.id if me is not None else 0)

    def go_home(self, guild_id: int, left: int) -> bool:
        """After leaving ``left`` (nobody listened): back to the guild's home channel at once,
        unless it was the home, the guild is held, OnAir is closing or plays there already."""
        voice = self._guild_voice(guild_id)
        home = voice.home_channel
        if not home or home == left or guild_id in self.held or self._closing():
            return False
        if guild_id in self.players or guild_id in self.rejoins:
            return False  # someone's /join got there first
        station = self._home_station(voice)
        if station is None:
            return False
        _LOGGER.info("voice in guild %s: back to the home channel", guild_id)
        self.rejoins.schedule(VoiceSession(guild_id, home, station.slug), first_delay=0.0)
        return True

    def _home_station(self, voice: GuildVoice) -> StationConfig | None:
        """The station the home channel plays: the one set with it, else the guild's default."""
        try:
            return self.registry.resolve(voice.guild_id, voice.station or None)
        except errors.OnAirError as error:
            _LOGGER.info(
                "not rejoining the home channel of guild %s: %s", voice.guild_id, error.message
            )
            return None

    async def rejoin_once(self, session: VoiceSession) -> bool | None:
        """True: playing again; False: nothing to rejoin (session dropped); None: try again."""
        guild = self.client.get_guild(session.guild_id)
        channel = guild.get_channel(session.channel_id) if guild is not None else None
        station = self.registry.station(session.station)
        if guild is None or station is None or not isinstance(channel, VoiceChannel):
            _LOGGER.info("voice session of guild %s has nothing left to rejoin", session.guild_id)
            await self.storage.remove_voice_session(session.guild_id)
            return False
        try:
            self._check_can_play(station)
            self._check_channel(channel)
        except VoiceRefused as refused:
            _LOGGER.info("not rejoining voice in guild %s: %s", guild.id, refused.message)
            await self.storage.remove_voice_session(session.guild_id)
            return False
        try:
            await self._play(channel, station)
        except VoiceRefused as refused:
            _LOGGER.info("rejoining voice in guild %s failed: %s", guild.id, refused.message)
            return None
        except Exception as error:  # a station error, Discord 5xx: try again later
            _LOGGER.warning(
                "rejoining voice in guild %s failed: %s", guild.id, type(error).__name__
            )
            return None
        self._played(guild.id, channel.id, station.slug)
        return True
