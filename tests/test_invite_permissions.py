"""The invite asks for what Discord requires of the routes OnAir calls: since 23 February 2026
a bot creates a Scheduled Event only with Create Events (Discord's change log, 2025-11-20 and
2025-11-24), which also lets it start and end its own."""

from __future__ import annotations

from bot.runtime.invite import invite_url, permissions

from .support import discord_rules as rules

CREATE_EVENTS, MANAGE_EVENTS = 1 << 44, 1 << 33


def test_the_invite_asks_for_create_events_and_not_manage_events():
    value = permissions().value
    assert value & CREATE_EVENTS
    assert not value & MANAGE_EVENTS  # anyone's events: OnAir touches only its own
    assert f"permissions={value}" in invite_url(1234567890123456789)
    assert value == 862296292281344


def test_the_invite_asks_for_create_polls():
    """Discord refuses a poll without Send Polls (Create Polls) in the channel: 403, 50013."""
    assert permissions().value & rules.SEND_POLLS


def test_the_invite_lets_onair_make_start_and_end_its_live_show_events():
    granted = permissions().value
    for creating in (True, False):  # create; then start (ACTIVE) and end (COMPLETED) its own
        assert rules.may_change_event(
            granted, entity_type=rules.EXTERNAL, creating=creating, own=True
        )
