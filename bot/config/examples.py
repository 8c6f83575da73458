"""The made-up Discord ids of config.example.toml (a server, an announcement channel, a staff
channel). A config copied without replacing them names channels that do not exist: OnAir says so
in those words, at start-up and when Discord answers 404, rather than "the channel no longer
exists". tests/test_config.py checks this set against the ids in config.example.toml."""

from __future__ import annotations

from .settings import Settings

EXAMPLE_IDS = frozenset({111111111111111111, 222222222222222222, 333333333333333333})
_REPLACE = 'put your own in its place (docs/setup.md, "Getting Discord ids") or delete the entry'


def example_id_note(snowflake: int) -> str:
    """Why Discord does not know ``snowflake``, when it is one of the example ids (short: a
    paused channel's reason is shown in ``/onair status``, cut at 150 characters)."""
    return f"{snowflake} is config.example.toml's example id: put your own in config.toml"


def example_ids_in(settings: Settings) -> list[str]:
    """One line per config entry that still holds an example id."""
    entries: list[tuple[str, tuple[int, ...]]] = []
    entries += [(f"[[guilds]] #{n}", (g.id,)) for n, g in enumerate(settings.guilds, 1)]
    entries += [
        (f"[[subscriptions]] #{n}", (s.guild_id, s.channel_id))
        for n, s in enumerate(settings.subscriptions, 1)
    ]
    entries += [
        (f"[[alerts]] #{n}", (a.guild_id, a.channel_id)) for n, a in enumerate(settings.alerts, 1)
    ]
    entries += [
        (f"[[recaps]] #{n}", (r.guild_id, r.channel_id)) for n, r in enumerate(settings.recaps, 1)
    ]
    lines = []
    for where, ids in entries:
        examples = [str(i) for i in ids if i in EXAMPLE_IDS]
        if examples:
            which = " and ".join(examples)
            noun = "ids" if len(examples) > 1 else "id"
            lines.append(f"{where}: {which}: config.example.toml's example {noun}; {_REPLACE}")
    return lines
