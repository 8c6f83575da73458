"""Voice decisions without Discord: which stream, when to leave, what the presence says, what the
logs withhold. Time is a ManualTimers clock moved by hand (no sleeps, no wall clock)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from bot.config import StationConfig
from bot.guard.netguard import policy_for
from bot.runtime.logs import VoiceSecretFilter
from bot.station.info import Links, Mount, StationInfo
from bot.util.metrics import Metrics
from bot.voice.idle import EmptyChannelWatch
from bot.voice.presence import PresenceGate, activity_name, presence_station, presence_text
from bot.voice.streams import choose_stream, link_candidates
from bot.voice.timers import ManualTimers

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
POLICY = policy_for(("*.radioboss.fm",), allow_http=False, allow_private=False)
CONFIG = StationConfig("main", "Main FM", "https://c5.radioboss.fm", 1)
GUILD = StationConfig("g7-mine", "Mine", "https://c9.radioboss.fm", 2, owner_guild=7)
TRUSTED = frozenset({"c5.radioboss.fm"})


def info(**links: object) -> StationInfo:
    return StationInfo(NOW, links=Links(**links))  # type: ignore[arg-type]


def test_listen_links_go_https_first_then_mounts_then_http():
    station = info(
        http="http://c5.radioboss.fm:8001/stream",
        ssl="https://c5.radioboss.fm:18001/stream",
        mounts=(Mount("autodj", ssl="https://c5.radioboss.fm:18001/autodj"),),
        port443=None,
        port80="http://c5.radioboss.fm/stream",
    )
    assert link_candidates(station) == [
        "https://c5.radioboss.fm:18001/stream",
        "https://c5.radioboss.fm:18001/autodj",
        "http://c5.radioboss.fm/stream",
        "http://c5.radioboss.fm:8001/stream",
    ]
    assert link_candidates(None) == []


def test_a_config_station_plays_its_configured_stream_as_written():
    station = StationConfig(
        "main", "Main", "https://c5.radioboss.fm", 1, stream_url="http://10.0.0.5:8000/live"
    )
    assert choose_stream(station, None, POLICY, TRUSTED) == "http://10.0.0.5:8000/live"


def test_a_config_station_link_on_its_own_host_is_trusted_others_are_guarded():
    links = info(
        ssl="https://169.254.169.254/latest/meta-data",
        mounts=(Mount("m", ssl="https://c5.radioboss.fm:18001/stream"),),
    )
    assert choose_stream(CONFIG, links, POLICY, TRUSTED) == "https://c5.radioboss.fm:18001/stream"


def test_guild_station_streams_are_guarded_like_the_urls_a_guild_types():
    hostile = info(
        port443="https://127.0.0.1/stream",
        ssl="https://user:pw@c9.radioboss.fm/stream",
        http="http://c9.radioboss.fm:8002/stream",  # http is not allowed by the policy
        mounts=(Mount("m", ssl="https://c9.radioboss.fm:18002/stream"),),  # port not allowed
    )
    assert choose_stream(GUILD, hostile, POLICY, TRUSTED) is None
    good = info(port443="https://c9.radioboss.fm/stream", ssl="https://127.0.0.1/x")
    assert choose_stream(GUILD, good, POLICY, TRUSTED) == "https://c9.radioboss.fm/stream"
    # A guild's own stream_url is checked too: an internal one is refused, a fine one kept.
    internal = StationConfig(
        "g7-x", "X", GUILD.base_url, 2, owner_guild=7, stream_url="https://10.1.2.3/s"
    )
    assert choose_stream(internal, good, POLICY, TRUSTED) is None
    fine = StationConfig(
        "g7-x", "X", GUILD.base_url, 2, owner_guild=7, stream_url="https://c9.radioboss.fm/live"
    )
    assert choose_stream(fine, None, POLICY, TRUSTED) == "https://c9.radioboss.fm/live"


def test_config_station_links_on_other_hosts_are_not_trusted():
    elsewhere = info(port443="https://intranet.example/stream")
    assert choose_stream(CONFIG, elsewhere, POLICY, TRUSTED) is None


class Left:
    def __init__(self) -> None:
        self.guilds: list[int] = []

    def __call__(self, guild_id: int) -> None:
        self.guilds.append(guild_id)


def test_an_empty_channel_is_left_after_leave_when_empty_seconds():
    timers, left = ManualTimers(), Left()
    watch = EmptyChannelWatch(timers, left)
    watch.update(1, 0, home=False, leave_after=60)
    timers.advance(30)
    watch.update(1, 0, home=False, leave_after=60)  # still empty: the count does not restart
    timers.advance(29.9)
    assert left.guilds == []
    timers.advance(0.1)
    assert left.guilds == [1]
    assert not watch.waiting(1)


def test_someone_coming_back_cancels_the_leave():
    timers, left = ManualTimers(), Left()
    watch = EmptyChannelWatch(timers, left)
    watch.update(1, 0, home=False, leave_after=60)
    timers.advance(59)
    watch.update(1, 1, home=False, leave_after=60)  # a listener joined
    timers.advance(3600)
    assert left.guilds == []
    watch.update(1, 0, home=False, leave_after=60)  # and left again: a fresh minute
    timers.advance(59)
    assert left.guilds == []
    timers.advance(1)
    assert left.guilds == [1]


def test_the_home_channel_and_leave_when_empty_0_stay():
    timers, left = ManualTimers(), Left()
    watch = EmptyChannelWatch(timers, left)
    watch.update(1, 0, home=True, leave_after=60)
    watch.update(2, 0, home=False, leave_after=0)
    timers.advance(86400)
    assert left.guilds == []
    assert timers.pending == 0


def test_presence_shows_the_station_played_in_most_guilds_else_the_default():
    assert presence_station(["a", "b", "b"], "a") == "b"
    assert presence_station(["a", "b"], "b") == "b"  # a tie goes to the default station
    assert presence_station([], "main") == "main"
    assert presence_station([], "") == ""


def test_presence_text_is_the_track_cut_to_discords_limit():
    assert presence_text(StationInfo(NOW, now_playing="Artist  -  Title")) == "Artist - Title"
    long = presence_text(StationInfo(NOW, now_playing="A - " + "x" * 300))
    assert long is not None
    assert len(long) == 128
    assert long.endswith("…")
    assert presence_text(StationInfo(NOW)) is None
    assert presence_text(None) is None


def test_presence_text_is_one_clean_line_whatever_the_station_sends():
    hostile = "\u202eDJ\u200b Evil\x00 -\n\tTitle\ud800 " + "😀" * 200
    text = presence_text(StationInfo(NOW, now_playing=hostile))
    assert text is not None
    assert text.startswith("DJ Evil - Title 😀")
    assert len(text) <= 128
    assert text.endswith("…")
    assert all(ch.isprintable() for ch in text)
    text.encode("utf-8")  # no lone surrogate: JSON encoders accept it
    assert presence_text(StationInfo(NOW, now_playing="\u200b\u202e \x07")) is None
    assert activity_name("x" * 10_000_000) == "x" * 127 + "…"  # bounded work, bounded text


def test_presence_is_sent_on_change_only_and_at_most_once_per_15_s_per_shard():
    timers = ManualTimers()
    gate = PresenceGate(timers)
    assert gate.due(0, "A - One")
    gate.sent(0, "A - One")
    assert not gate.due(0, "A - One")  # unchanged: never again
    timers.advance(5)
    assert not gate.due(0, "B - Two")  # changed, but 5 s after the last update
    assert gate.due(1, "B - Two")  # another shard has its own budget
    timers.advance(10)
    assert gate.due(0, "B - Two")
    gate.sent(0, "B - Two")
    timers.advance(600)
    assert not gate.due(0, "B - Two")


def test_voice_tokens_and_session_keys_are_withheld_from_discord_debug_logs():
    records = [
        ("Sending voice websocket frame: %s.", ({"op": 0, "d": {"token": "vtok-123"}},)),
        ("Voice websocket frame received: %s", ({"op": 4, "d": {"secret_key": [9, 8, 7, 200]}},)),
        (
            "For Shard ID %s: WebSocket Event: %s",
            (0, {"t": "VOICE_SERVER_UPDATE", "d": {"token": "vtok-123"}}),
        ),
    ]
    withheld = VoiceSecretFilter()
    for message, args in records:
        record = logging.LogRecord("discord.gateway", logging.DEBUG, "x", 1, message, args, None)
        assert withheld.filter(record)
        text = record.getMessage()
        assert "vtok-123" not in text
        assert "9, 8, 7, 200" not in text
        assert "[withheld]" in text


def test_labelled_gauges_render_one_line_per_station():
    metrics = Metrics()
    metrics.labelled["voice_listeners"] = ("station", lambda: {"main": 3, "g1-x": 0})
    text = metrics.render()
    assert 'onair_voice_listeners{station="main"} 3' in text
    assert 'onair_voice_listeners{station="g1-x"} 0' in text
    assert text.count("# TYPE onair_voice_listeners gauge") == 1


def test_leave_is_one_sentence_and_an_admin_also_reads_how_to_clear_the_home():
    from bot.render.voice_text import left_text

    assert left_text(0, admin=False) == "⏹ Stopped and left the voice channel."
    listener = left_text(42, admin=False)
    assert listener == "⏹ Stopped; I'll be back in <#42> after my next restart."
    admin = left_text(42, admin=True)
    assert admin.count(".") == 1  # one sentence
    assert "`/onair voice channel:none`" in admin
