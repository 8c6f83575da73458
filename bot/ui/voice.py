"""/join, /leave and the "▶ Play in <channel>" button: what they check and answer (the voice
cog and the /nowplaying and /listen replies share it; the playing is ``bot.voice.service``)."""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from .. import errors
from ..catalog.registry import short_slug
from ..errors import BadInput, OnAirError, VoiceRefused
from ..guard.netguard import HostPolicy, UrlRefused
from ..render import voice_text
from ..storage import GuildVoice
from ..util.i18n import ENGLISH, N_, Lang
from ..util.text import safe
from ..voice.stream import UnsafeStreamUrl, check_stream_url, elided
from ..voice.streams import check_stream
from .dynamic import Persistent
from .reply import Reply, answer
from .stations import reader_lang, resolve_station

if TYPE_CHECKING:
    from ..config import StationConfig
    from ..runtime.core import OnAirBot
    from ..voice.players import Joined, VoiceChannel

PLAY_PREFIX = "onair:play:"
# It plays in the voice channel of whoever clicks it (not always the invoker's): no channel name.
PLAY_LABEL = N_("🔊 Play in voice")
BUTTON_LABEL = 80
ROWS, PER_ROW = 5, 5


def invoker_channel(interaction: discord.Interaction[Any]) -> VoiceChannel | None:
    """The voice or stage channel the invoker is in, in the guild the interaction came from."""
    guild = interaction.guild
    if guild is None:
        return None
    member = guild.get_member(interaction.user.id) or interaction.user
    state = member.voice if isinstance(member, discord.Member) else None
    channel = state.channel if state is not None else None
    if isinstance(channel, discord.VoiceChannel | discord.StageChannel) and channel.guild == guild:
        return channel
    return None


def joined_text(joined: Joined, lang: Lang = ENGLISH) -> str:
    text = lang.t(
        "▶ Playing **{station}** in {channel}.",
        station=safe(joined.station.name, limit=80),
        channel=joined.channel.mention,
    )
    return f"{text}\n{joined.note.said_in(lang)}" if joined.note is not None else text


async def join_here(interaction: discord.Interaction[OnAirBot], station: str | None) -> None:
    """What /join does: checks that need no network first, then the stream check and the
    connection (a private "thinking" first when that takes more than a moment). Every answer,
    errors included, is private."""
    if interaction.guild is None:
        raise VoiceRefused(errors.NOT_HERE)
    voice = interaction.client.voice
    chosen = resolve_station(interaction, station)
    channel = invoker_channel(interaction)
    if channel is None:
        raise VoiceRefused(errors.JOIN_NO_CHANNEL)
    voice.check_can_play(chosen)
    voice.check_channel(channel)

    async def work() -> Reply:
        joined = await voice.join(channel, chosen)
        return Reply(content=joined_text(joined, reader_lang(interaction)), ephemeral=True)

    await answer(interaction, work(), ephemeral=True)


class PlayHereButton(
    Persistent,
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=re.compile(re.escape(PLAY_PREFIX) + r"(?P<station>[a-z0-9_-]{1,80})"),
):
    """Does what /join does for whoever clicks it (it works after a restart: the station is in
    its custom id)."""

    def __init__(self, station: str, label: str = "▶ Play here") -> None:
        super().__init__(
            discord.ui.Button(
                label=label[:BUTTON_LABEL],
                style=discord.ButtonStyle.primary,
                custom_id=f"{PLAY_PREFIX}{station}",
            )
        )
        self.station = station

    @classmethod
    def rebuild(cls, match: re.Match[str], item: Any) -> PlayHereButton:
        return cls(match["station"], getattr(item, "label", None) or "▶ Play here")

    async def act(self, interaction: discord.Interaction[Any]) -> None:
        await join_here(interaction, self.station)


def with_play_button(
    interaction: discord.Interaction[OnAirBot],
    station: StationConfig,
    view: discord.ui.View | None,
) -> discord.ui.View | None:
    """``view`` with "🔊 Play in voice" first, on a row of its own above Listen and Web player,
    when the invoker is in a voice channel and the station can play there. Its own row: three
    buttons do not fit one row on a phone (each is at least 92 px wide there), so the main
    action stays first and whole on every screen. When the rows are all taken, it takes the
    first free place (the last item gives way when all 25 are taken)."""
    channel = invoker_channel(interaction)
    voice = getattr(interaction.client, "voice", None)
    if channel is None or voice is None or not voice.available or not station.voice:
        return view
    button = PlayHereButton(station.slug, reader_lang(interaction).t(PLAY_LABEL))
    # Copies: ``view`` may be a rendered view shared by every answer of the same snapshot.
    items = [copy.copy(item) for item in view.children] if view is not None else []
    ordered = discord.ui.View(timeout=None)
    if any((item.row or 0) >= ROWS - 1 for item in items):
        for item in items:
            ordered.add_item(item)
        return _append(ordered, button, items)
    button.row = 0
    ordered.add_item(button)
    for item in items:
        item.row = (item.row or 0) + 1
        ordered.add_item(item)
    return ordered


def _width(item: discord.ui.Item[Any]) -> int:
    """Places an item takes in its row: a select menu (a dynamic item wraps one) fills it."""
    inner = getattr(item, "item", item)
    return PER_ROW if isinstance(inner, discord.ui.Select) else 1


def _append(
    view: discord.ui.View, button: PlayHereButton, items: list[discord.ui.Item[Any]]
) -> discord.ui.View:
    used = Counter((item.row or 0) for item in items for _ in range(_width(item)))
    free = next((row for row in range(ROWS) if used[row] < PER_ROW), None)
    if free is None:
        last = view.children[-1]
        view.remove_item(last)
        free = last.row or 0
    button.row = free
    view.add_item(button)
    return view


# /onair voice ----------------------------------------------------------------------------

NONE_VALUES = frozenset({"", "none", "off", "0", "no"})


async def voice_channel_autocomplete(
    interaction: discord.Interaction[Any], current: str
) -> list[app_commands.Choice[str]]:
    """The guild's voice and stage channels, and "none" (no home channel)."""
    guild = interaction.guild
    needle = current.casefold().strip()
    none = reader_lang(interaction).t(N_("none (no 24/7 home channel)"))
    choices = [app_commands.Choice(name=none, value="none")]
    if guild is not None:
        for channel in [*guild.voice_channels, *guild.stage_channels]:
            name = " ".join(channel.name.split())
            if not needle or needle in name.casefold():
                icon = "🎙" if isinstance(channel, discord.StageChannel) else "🔊"
                choices.append(
                    app_commands.Choice(name=f"{icon} {name}"[:100], value=str(channel.id))
                )
    return choices[:25]


def home_channel_input(guild: discord.Guild, value: str) -> int:
    """A voice or stage channel of ``guild`` (its id, mention or name) or none (0)."""
    text = value.strip()[:120]
    if text.casefold() in NONE_VALUES or text.casefold().startswith("none"):
        return 0
    digits = text.removeprefix("<#").removesuffix(">")
    channel: Any = None
    if digits.isdigit() and len(digits) <= 20:
        channel = guild.get_channel(int(digits))
    else:
        wanted = text.lstrip("🔊🎙 ").casefold()
        channel = next(
            (
                c
                for c in [*guild.voice_channels, *guild.stage_channels]
                if c.name.casefold() == wanted
            ),
            None,
        )
    if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
        raise BadInput(errors.NOT_A_VOICE_CHANNEL)
    return int(channel.id)


# What clears a guild station's stream address back to its best listen link.
DEFAULT_STREAM_VALUES = NONE_VALUES | {"default", "auto", "clear"}


def stream_url_input(chosen: StationConfig | None, value: str, policy: HostPolicy) -> str:
    """The stream address to store for a station this guild added ("" = its best listen
    link); checked like every URL a guild gives (no network yet: the probe comes later)."""
    if chosen is None:
        raise BadInput(errors.STREAM_URL_NEEDS_STATION)
    if not chosen.owner_guild:
        raise VoiceRefused(errors.STREAM_URL_CONFIG_STATION, station=safe(chosen.name, limit=80))
    text = value.strip()
    if text.casefold() in DEFAULT_STREAM_VALUES:
        return ""
    try:
        check_stream(check_stream_url(text), policy, frozenset())
    except UrlRefused as error:
        raise BadInput(errors.BAD_STREAM_URL, reason=errors.Reason(error)) from None
    except UnsafeStreamUrl as error:
        reason = errors.Reason(error.text, **error.values)
        raise BadInput(errors.BAD_STREAM_URL, reason=reason) from None
    return text


async def configure_voice(
    interaction: discord.Interaction[OnAirBot],
    channel: str | None,
    leave_when_empty: int | None,
    station: str | None,
    stream_url: str | None = None,
    status: bool | None = None,
) -> None:
    """``/onair voice``: the 24/7 home channel (joined now), the empty-channel timeout, the
    station and whether OnAir shows what plays as the channel's status; for a station the guild
    added, this turns voice on (with the rebroadcast terms) and sets its stream address (probed
    before it is saved)."""
    guild = interaction.guild
    if guild is None:
        raise VoiceRefused(errors.NOT_HERE)
    current = interaction.client.voice.guild_voice(guild.id)
    home = home_channel_input(guild, channel) if channel is not None else current.home_channel
    chosen = resolve_station(interaction, station) if station else None
    stream = None
    if stream_url is not None:
        stream = stream_url_input(chosen, stream_url, interaction.client.registry.policy)
    if chosen is not None and not chosen.owner_guild and not chosen.voice:
        raise VoiceRefused(errors.STATION_NO_VOICE, station=safe(chosen.name, limit=80))

    async def work() -> Reply:
        content = await _apply_voice(
            interaction, guild, chosen, home, leave_when_empty, channel, stream, status
        )
        return Reply(content=content, ephemeral=True)

    await answer(interaction, work(), ephemeral=True)


async def _apply_voice(
    interaction: discord.Interaction[OnAirBot],
    guild: discord.Guild,
    chosen: StationConfig | None,
    home: int,
    leave_when_empty: int | None,
    channel: str | None,
    stream: str | None = None,
    status: bool | None = None,
) -> str:
    """Store the settings (and the opt-in, and the stream address once it played), join a new
    home channel; the reply's lines."""
    bot = interaction.client
    voice = bot.voice
    current = voice.guild_voice(guild.id)
    lang = reader_lang(interaction)
    lines: list[str] = []
    played = None
    if chosen is not None and stream:  # (the checks made sure it is the guild's own station)
        played = await voice.try_stream(chosen, stream)  # nothing is saved when it fails
    if chosen is not None and chosen.owner_guild and (not chosen.voice or stream is not None):
        was_on = chosen.voice
        address = stream if stream is not None else chosen.stream_url
        await bot.storage.set_guild_station_voice(
            guild.id, short_slug(chosen), voice=True, stream_url=address
        )
        chosen = bot.registry.set_voice(chosen.slug, voice=True, stream_url=address)
        assert chosen is not None
        if not was_on:
            lines.append(
                lang.t("Voice is now on for **{station}**.", station=safe(chosen.name, limit=80))
            )
        if stream is not None:
            switched = await voice.stream_changed(chosen, played)
            lines.append(stream_line(chosen, switched, lang))
    if chosen is not None and chosen.owner_guild:
        lines.append(f"-# {lang.t(errors.REBROADCAST_TERMS)}")
    updated = GuildVoice(
        guild.id,
        home,
        float(leave_when_empty) if leave_when_empty is not None else current.leave_when_empty,
        chosen.slug if chosen is not None else current.station,
        current.channel_status if status is None else status,
    )
    await voice.save_guild_voice(updated)
    if status is not None:
        player = voice.players.get(guild.id)
        if player is not None:
            await bot.shows.voice_settings_changed(guild.id, player.channel_id)
    lines.insert(0, settings_reply(guild, updated, bot, lang))
    if channel is not None and home and voice.available:
        lines.append(await _join_home(interaction, guild, updated))
    return "\n".join(lines)


def stream_line(station: StationConfig, switched: bool, lang: Lang = ENGLISH) -> str:
    """The stream address just set: scheme and host only (paths and queries may carry a
    listener token)."""
    name = safe(station.name, limit=80)
    if station.stream_url:
        line = lang.t(
            "Stream for **{station}**: {address} (it plays).",
            station=name,
            address=elided(station.stream_url),
        )
    else:
        line = lang.t("Stream for **{station}**: its best listen link (the default).", station=name)
    return line + (" " + lang.t("I switched to it where it plays now.") if switched else "")


def settings_reply(
    guild: discord.Guild, voice: GuildVoice, bot: OnAirBot, lang: Lang = ENGLISH
) -> str:
    """The settings as stored, with the channel status OnAir shows now where it plays and the
    permission it lacks there (:func:`bot.render.voice_text.settings_text`)."""
    home = guild.get_channel(voice.home_channel) if voice.home_channel else None
    station = bot.registry.station(voice.station) if voice.station else None
    channel = _playing_channel(guild, bot)
    missing = None
    status_now = None
    if voice.channel_status and isinstance(channel, discord.VoiceChannel):
        if not channel.permissions_for(guild.me).set_voice_channel_status:
            missing = channel.mention
        mine = bot.shows.status.written(channel.id)
        if mine and bot.shows.status.current(channel.id) in (None, mine):
            status_now = mine
    return voice_text.settings_text(
        home=home.mention if home is not None else None,
        leave_when_empty=voice.leave_when_empty,
        station=f"**{safe(station.name, limit=80)}**" if station else None,
        status_on=voice.channel_status,
        status_now=status_now,
        missing_permission_in=missing,
        lang=lang,
    )


def _playing_channel(guild: discord.Guild, bot: OnAirBot) -> discord.abc.GuildChannel | None:
    player = bot.voice.players.get(guild.id)
    return guild.get_channel(player.channel_id) if player is not None else None


async def _join_home(
    interaction: discord.Interaction[OnAirBot], guild: discord.Guild, settings: GuildVoice
) -> str:
    """Join the new home channel now; a refusal becomes a line of the reply."""
    lang = reader_lang(interaction)
    channel = guild.get_channel(settings.home_channel)
    if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
        return ""
    try:
        station = resolve_station(interaction, settings.station or None)
        joined = await interaction.client.voice.join(channel, station)
    except OnAirError as refused:
        return lang.t(
            "I could not join {channel} now: {reason}",
            channel=channel.mention,
            reason=refused.said_in(lang),
        )
    return joined_text(joined, lang)
