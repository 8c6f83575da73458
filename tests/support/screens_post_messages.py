"""Issue 32's message scenes in en, pt-BR and de: posts across a jingle, /onair template
preview, /stats with today in its range, a refused /request (a reason the field notes list and
one they do not) and /onair status of a guild with a post channel and a card channel.

One guild per language (set with /onair settings), its admin and listeners in the same language.

    .venv/bin/python -m tests.support.screens OUT_DIR post_messages
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from bot.simulator import JINGLES, TRACKS

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_announcements import settled
from .screens_community import screen_station
from .screens_record import BERLIN, STATUS, write_scene

# (Discord locale, catalog code, file tag)
LOCALES = (("en-US", "en", "en"), ("pt-BR", "pt_BR", "pt-br"), ("de", "de", "de"))
OTHER_REASON = "Requests from this *region* are paused until Friday"


def _busy_today_seed(days: int = 7) -> int:
    """A simulator seed whose busiest day of the last ``days`` (Berlin's calendar, as /stats
    reads it) is today and whose second is yesterday: the case where a day so far was crowned."""
    from bot.simulator.station import SimStation

    from .screens_community import screen_station as make

    _clock, sim = make([(TRACKS[0], 200.0)])
    station: SimStation = sim.station(1)
    today = datetime.now(BERLIN).date()
    span = [today - timedelta(days=back) for back in range(days)]
    for seed in range(1, 5000):
        station.seed = seed
        counts = [station.day_counts(day)[0] for day in span]
        if counts[0] > counts[1] > max(counts[2:]):
            return seed
    return 1


async def post_messages(out: Path) -> None:
    # TRACKS[0] on air 30 s, the 5 s jingle at 200 s, then TRACKS[1].
    slots = [(TRACKS[0], 200.0), (JINGLES[0], 5.0), (TRACKS[1], 200.0), (TRACKS[2], 200.0)]
    clock, sim = screen_station(slots, zone=BERLIN)
    sim.station(1).seed = _busy_today_seed()
    await sim.start()
    fake = FakeDiscord(guild_count=3, channels_per_guild=2)
    await fake.start()
    config = "".join(
        subscription_config(guild.id, guild.channels[0], mode="post")
        + subscription_config(guild.id, guild.channels[1], mode="card")
        for guild in fake.guilds
    )
    owner = fake.owner_id
    try:
        async with running_bot(
            sim, fake=fake, extra_config=config, station_options="requests = true"
        ) as env:
            await fake.wait_for(
                lambda: len(fake.sent("POST", r"/channels/\d+/messages$")) >= len(fake.guilds)
            )
            await env.bot.announcer.idle()
            for (locale, code, _tag), guild in zip(LOCALES, fake.guilds, strict=True):
                fake.user_locales[owner] = locale
                options = {"language": code, "timezone": "Europe/Berlin"}
                iid = await fake.slash("onair", options, sub=["settings"], guild=guild)
                await fake.final_message(iid, within=30)
            # 1. Posts across the jingle: the track, the jingle (200-205 s), the next track.
            since = len(fake.requests)
            announcer = env.bot.announcer
            for step in (172.0, 5.0):
                clock.advance(step)
                watch = announcer.watched()[0]
                await fake.wait_for(settled(watch))
                before = watch.status.polls
                announcer.poll_now(watch)
                await fake.wait_for(settled(watch, after=before))
                await announcer.idle()
            for (_locale, _code, tag), guild in zip(LOCALES, fake.guilds, strict=True):
                posts = guild.channels[0]
                write_scene(
                    fake,
                    out / f"messages-jingle-{tag}.jsonl",
                    since,
                    {},
                    only=rf"/channels/{posts}/messages$",
                )
            for (locale, _code, tag), guild in zip(LOCALES, fake.guilds, strict=True):
                fake.user_locales[owner] = locale
                # 2. /onair template preview of the post channel.
                since = len(fake.requests)
                channel = guild.channels[0]
                iid = await fake.slash(
                    "onair",
                    {"channel": str(channel)},
                    sub=["template", "preview"],
                    resolved=fake.resolved_channel(channel, guild),
                    guild=guild,
                )
                await fake.final_message(iid, within=30)
                label = f"/onair template preview channel:#{channel}"
                write_scene(fake, out / f"messages-preview-{tag}.jsonl", since, {iid: label})
                # 3. /stats over the last 7 days, today among them.
                since = len(fake.requests)
                iid = await fake.slash("stats", {"period": "7d"}, guild=guild)
                await fake.final_message(iid, within=60)
                write_scene(fake, out / f"messages-stats-{tag}.jsonl", since, {iid: "/stats"})
                # 5. /onair status: a post channel and a card channel.
                since = len(fake.requests)
                iid = await fake.slash("onair", {}, sub=["status"], guild=guild)
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"messages-status-{tag}.jsonl", since, {iid: STATUS})
            # 4. /request refused: played recently (a reason the field notes list), then one
            # they do not (the station's own words).
            desk = sim.station(1).song_requests
            for index, ((locale, _code, tag), guild) in enumerate(
                zip(LOCALES, fake.guilds, strict=True)
            ):
                user = 100 + index
                fake.user_locales[user] = locale
                since = len(fake.requests)
                commands = {}
                for reason, track in ((None, 1), (OTHER_REASON, 2)):
                    desk.refusal = reason
                    title = TRACKS[track].cast_title
                    await fake.response(
                        await fake.autocomplete(
                            "request", "song", TRACKS[track].title[:6], guild=guild, user_id=user
                        )
                    )
                    iid = await fake.slash(
                        "request", {"song": str(1001 + track)}, guild=guild, user_id=user
                    )
                    await fake.final_message(iid, within=30)
                    commands[iid] = f"/request song:{title}"
                write_scene(fake, out / f"messages-request-{tag}.jsonl", since, commands)
            desk.refusal = None
    finally:
        await fake.stop()
        await sim.stop()
