"""What counts as a jingle: short items, and what the guild's skip settings skip."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.announcer.filters import skip_reason
from bot.programme.jingles import SkipRules, is_jingle
from bot.render import station_embeds
from bot.station import StationInfo
from bot.storage import Subscription


def test_short_items_are_jingles_live_and_long_items_are_not():
    assert is_jingle(timedelta(seconds=5), ["Station ID"])
    assert is_jingle(timedelta(seconds=29.9), [])
    assert not is_jingle(timedelta(seconds=30), ["A song"])
    assert not is_jingle(timedelta(0), ["Live show"])  # live: no length
    assert not is_jingle(None, ["Unknown length"])


def test_the_guilds_skip_settings_make_jingles_too():
    subs = [
        Subscription(1, 1, 10, "main", skip_pattern="^Promo"),
        Subscription(2, 1, 11, "main", skip_item_types=("ad",)),
    ]
    rules = SkipRules.of(subs)
    assert rules.item_types == frozenset({"AD"})
    long = timedelta(minutes=3)
    assert is_jingle(long, ["promo: the morning show"], rules=rules)
    assert is_jingle(long, ["A song"], "AD", rules=rules)
    assert not is_jingle(long, ["A song"], "TRACK", rules=rules)
    assert not is_jingle(long, ["promo: the morning show"])  # without the settings


def _info(next_title: str, next_length: str) -> StationInfo:
    raw = {
        "nowplaying": "Artist - Song",
        "nexttrack": next_title,
        "nexttrack_info": {"@attributes": {"TITLE": next_title, "DURATION": next_length}},
        "playback": {"pos": 1000, "len": 200000},
    }
    return StationInfo.parse(raw, UTC, datetime(2026, 1, 1, 10, tzinfo=UTC))


def test_next_leaves_jingles_out_of_nowplaying_and_announcements():
    for info, named in ((_info("Station ID", "00:05"), False), (_info("Song", "03:10"), True)):
        embed, _ = station_embeds.nowplaying(info, "S", stale=False)
        assert ("Next\u00a0at" in (embed.description or "")) is named
        play = info.current_play()
        assert play is not None
        embed, _ = station_embeds.announcement(info, play, "S")
        assert ("Next\u00a0at" in (embed.description or "")) is named
    promo = _info("Promo: win tickets", "03:10")
    rules = SkipRules.of([Subscription(1, 1, 10, "main", skip_pattern="^promo")])
    embed, _ = station_embeds.nowplaying(promo, "S", stale=False, skip=rules)
    assert "Next" not in (embed.description or "")


def test_a_jingle_is_announced_in_neither_mode_a_live_show_and_a_track_are():
    play = _info("Song", "03:10").current_play()
    assert play is not None
    for mode in ("post", "card"):
        sub = Subscription(1, 1, 10, "main", mode=mode)
        assert skip_reason(sub, replace(play, duration=timedelta(seconds=5))) == "a jingle"
        assert skip_reason(sub, replace(play, duration=timedelta(seconds=30))) is None
        assert skip_reason(sub, replace(play, duration=timedelta(0), live=True)) is None
        assert skip_reason(sub, replace(play, duration=None)) is None
