"""A fleet's public posts in the guild's language whichever process makes them: two real bots on
one PostgreSQL (one shard each), one fake Discord, the guild's server language German (Discord's
preferred locale "de") and no ``/onair settings language``. The process not serving the guild's
shard has no discord.py cache of it; it still posts the guild's alerts and recaps in German, from
the locale the guild's own process stored when the gateway showed it."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.catalog.languages import GuildLanguages
from bot.simulator import LIVE_SHOW, TRACKS, StationSimulator
from bot.station import StationInfo
from bot.storage import AlertSubscription, GuildSettings

from .support import discord_rules as rules
from .support.botenv import STATION_KEY, BotEnv, running_bot, subscription_config
from .support.fakediscord import FakeDiscord
from .support.stations import programme_sim_fixture
from .support.storage_backends import reset_postgres
from .support.waiting import poll_watch, wait_for

pytestmark = pytest.mark.e2e
SLOTS = [(TRACKS[0], 3600.0), (LIVE_SHOW, 3600.0)]

fleet_sim = programme_sim_fixture("fleet_sim", SLOTS, key=STATION_KEY)


def titles(fake: FakeDiscord, channel: int) -> list[str]:
    """The embed titles of the messages in ``channel``, oldest first."""
    messages = [fake.messages[m] for m in fake.channel_messages[channel]]
    return [str(m["embeds"][0]["title"]) for m in messages if m.get("embeds")]


@contextlib.asynccontextmanager
async def process(
    sim: StationSimulator, fake: FakeDiscord, url: str, shard: int, config: str = ""
) -> AsyncIterator[BotEnv]:
    """One process of the fleet: shard ``shard`` of 2 on the shared database."""
    async with running_bot(
        sim,
        fake=fake,
        bot_extra=f"shard_count = 2\nshard_ids = [{shard}]",
        env_extra={"ONAIR_DATABASE_URL": url},
        extra_config=config,
        clock=sim.clock,
    ) as env:
        yield env


@contextlib.asynccontextmanager
async def german_guild(url: str) -> AsyncIterator[tuple[FakeDiscord, Any, int]]:
    """An emptied database and the fake with one German guild: (fake, guild, its shard)."""
    await reset_postgres(url)
    fake = FakeDiscord()
    await fake.start()
    guild = fake.guilds[0]
    guild.preferred_locale = "de"
    try:
        yield fake, guild, (guild.id >> 22) % 2
    finally:
        await fake.stop()


async def seen_by_its_process(
    sim: StationSimulator, fake: FakeDiscord, url: str, shard: int
) -> None:
    """The guild's own process starts, sees the guild on the gateway and stops."""
    guild = fake.guilds[0]
    async with process(sim, fake, url, shard) as serving:
        assert serving.bot.get_guild(guild.id) is not None

        await wait_for(lambda: stored_as(serving, guild.id, "de"))


async def stored_as(env: BotEnv, guild_id: int, locale: str) -> bool:
    """Whether the fleet's storage holds ``locale`` as the guild's preferred locale."""
    settings = await env.bot.storage.guild_settings(guild_id)
    return getattr(settings, "preferred_locale", "") == locale


async def live_now(env: BotEnv, guild: Any, channel: int) -> str:
    """``env`` judges the live show on air and sends the guild's alert; the show's name."""
    await env.bot.alerts.subscribe(AlertSubscription(guild.id, "main", channel, guild.roles[1]))
    show = f"{LIVE_SHOW.artist} - {LIVE_SHOW.title}"
    raw = {"nowplaying": show, "live": True, "playback": {"pos": 1, "state": "play"}}
    now = datetime.fromtimestamp(env.sim.clock(), UTC)
    await env.bot.alerts.observe(["main"], StationInfo.parse(raw, UTC, now), None)
    await env.bot.posts.idle()
    return show


async def test_an_alert_from_a_process_not_serving_the_guild_is_in_its_language(
    postgres_url, fleet_sim
):
    """The station's poller is a process of the other shard (the guild's own is down for a
    restart): it judges the live show and sends the guild's LIVE NOW in German."""
    async with german_guild(postgres_url) as (fake, guild, own):
        channel = guild.channels[0]
        await seen_by_its_process(fleet_sim, fake, postgres_url, own)
        async with process(fleet_sim, fake, postgres_url, 1 - own) as other:
            assert other.bot.get_guild(guild.id) is None
            show = await live_now(other, guild, channel)
        assert titles(fake, channel) == [f"🔴 JETZT LIVE: {show}"]


async def test_a_recap_from_a_process_not_serving_the_guild_is_in_its_language(
    postgres_url, fleet_sim
):
    """Every process of a fleet may record and send a guild's weekly recap: the one of the
    other shard reaching the slot first posts it in German."""
    async with german_guild(postgres_url) as (fake, guild, own):
        channel = guild.channels[1]
        await seen_by_its_process(fleet_sim, fake, postgres_url, own)
        async with process(fleet_sim, fake, postgres_url, 1 - own) as other:
            assert other.bot.get_guild(guild.id) is None
            slot = (datetime.fromtimestamp(fleet_sim.clock(), UTC) + timedelta(hours=2)).replace(
                minute=0, second=0, microsecond=0
            )
            await other.bot.recaps.configure(guild.id, channel, "main", slot.weekday(), slot.hour)
            fleet_sim.clock.now = slot.timestamp() + 30
            assert len(await other.bot.recaps.tick()) == 1
            await other.bot.posts.idle()
        assert titles(fake, channel) == ["📊 Die Woche bei Main FM"]


async def test_an_announcement_the_other_shards_poller_records_is_sent_in_the_guilds_language(
    postgres_url, fleet_sim
):
    """The station's poller serves the other shard (it follows the station for the guild's
    alerts): it records the play for the guild's channel and sends nothing there; the guild's
    own process, started after, sends it from the outbox, rendered in German."""
    async with german_guild(postgres_url) as (fake, guild, own):
        channel, alert_channel = guild.channels
        config = subscription_config(guild.id, channel) + (
            f"\n[[alerts]]\nguild = {guild.id}\nstation = 'main'\nchannel = {alert_channel}\n"
        )
        async with process(fleet_sim, fake, postgres_url, 1 - own, config) as other:
            assert other.bot.get_guild(guild.id) is None
            (watch,) = other.bot.announcer.watched()
            await wait_for(lambda: watch.owned and watch.status.polls > 0 and not watch.busy)
            await other.bot.announcer.idle()
            assert fake.channel_messages[channel] == [], "sent by a process of another shard"
            async with process(fleet_sim, fake, postgres_url, own, config) as serving:
                await wait_for(lambda: bool(fake.channel_messages[channel]))
                await serving.bot.announcer.idle()
        (posted,) = [fake.messages[m] for m in fake.channel_messages[channel]]
        assert re.fullmatch(r"Main FM · \d+ hören zu", posted["embeds"][0]["footer"]["text"])
        labels = [b["label"] for row in posted["components"] for b in row["components"]]
        assert labels == ["Anhören", "Webplayer", "Gefällt mir"]


async def test_a_changed_server_language_reaches_the_other_shards_process(postgres_url, fleet_sim):
    """The server's language changes from German to French while both processes run
    (GUILD_UPDATE, to the guild's shard only): the guild's process stores it, and the other
    process's next alert for the guild is in French. (Only the process deciding the alert sends
    it: no sweep runs meanwhile.)"""
    quiet = "[announcer]\ndelivery_lease = 600\n"
    async with german_guild(postgres_url) as (fake, guild, own):
        channel = guild.channels[0]
        async with (
            process(fleet_sim, fake, postgres_url, own, quiet) as serving,
            process(fleet_sim, fake, postgres_url, 1 - own, quiet) as other,
        ):
            await wait_for(lambda: stored_as(serving, guild.id, "de"))
            guild.preferred_locale = "fr"
            await fake.update_guild(guild)
            await wait_for(lambda: stored_as(serving, guild.id, "fr"))
            show = await live_now(other, guild, channel)
        assert titles(fake, channel) == [f"🔴 EN DIRECT\u00a0: {show}"]


async def test_each_guilds_locale_is_written_when_it_changes_only(storage):
    """A start of thousands of guilds writes only the locales storage does not hold; Discord's
    default en-US makes no row; the guild's own settings stay as they are."""
    await storage.save_guild_settings(GuildSettings(1, language="es", timezone="Europe/Madrid"))
    languages = GuildLanguages(storage)
    seen = [(1, "de"), (2, "en-US"), (3, "fr")]
    assert await languages.seen(seen) == 2
    assert await storage.preferred_locales() == {1: "de", 3: "fr"}
    assert await storage.guild_settings(1) == GuildSettings(
        1, "Europe/Madrid", language="es", preferred_locale="de"
    )
    assert await storage.guild_settings(2) == GuildSettings(2)
    assert await languages.seen(seen) == 0  # seen again (a shard reconnecting)
    restarted = GuildLanguages(storage)
    assert await restarted.seen([(1, "de"), (2, "en-US"), (3, "en-US")]) == 1
    assert await storage.preferred_locales() == {1: "de"}
    await storage.save_guild_settings(GuildSettings(1, language=""))  # /onair settings
    assert (await storage.guild_settings(1)).preferred_locale == "de"


async def test_a_live_show_the_other_shards_poller_sees_gets_an_event_in_the_guilds_language(
    postgres_url, fleet_sim
):
    """The poller serves the other shard and makes no event for a guild it does not hold; it
    publishes the play, and the guild's own process makes the live show's event in German."""
    async with german_guild(postgres_url) as (fake, guild, own):
        guild.bot_role_permissions |= rules.CREATE_EVENTS
        alerts = (
            f"\n[[alerts]]\nguild = {guild.id}\nstation = 'main'\nchannel = {guild.channels[1]}\n"
        )
        async with process(fleet_sim, fake, postgres_url, 1 - own, alerts) as other:
            (watch,) = other.bot.announcer.watched()
            await wait_for(lambda: watch.owned and watch.status.polls > 0 and not watch.busy)
            async with process(fleet_sim, fake, postgres_url, own) as serving:
                await serving.bot.shows.set_events(guild.id, "main", on=True)
                assert not serving.bot.announcer.watched()[0].owned
                fleet_sim.clock.advance(3600)  # the live show
                await poll_watch(other.bot.announcer)
                await other.bot.announcer.idle()
                await wait_for(lambda: bool(guild.events))
        (event,) = guild.events.values()
        show = f"{LIVE_SHOW.artist} - {LIVE_SHOW.title}"
        assert re.fullmatch(
            rf"{re.escape(show)} live bei .+\. Schalt ein mit `/join` oder `/listen`\.",
            event["description"],
        )
