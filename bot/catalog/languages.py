"""Each guild's stored language (``/onair settings language:``) and whether it shows song links,
remembered for a short while.

Every public post asks for its guild's language: an announcement to a thousand guilds, the voice
status of every channel playing a station. Without this, each of them is one SELECT. The cache
is per process and bounded (``size`` guilds, the least recently used go first); a change made
with ``/onair settings`` in this process is seen at once (:meth:`GuildLanguages.forget`), and
other processes of a fleet see it within ``ttl`` seconds. While the database fails, a post goes
on in the language last read (else Discord's / English): a lookup never stops a post.

In a fleet a guild's post may be made by a process whose discord.py cache lacks the guild (an
alert decided by the station's poller, a recap): the process serving the guild's shard stores
the guild's preferred locale when the gateway shows it (:meth:`GuildLanguages.seen`), and the
others read it with the guild's settings.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from ..storage import GuildSettings, Storage

_LOGGER = logging.getLogger("onair.storage")

LANGUAGE_TTL = 60.0  # seconds another process may show the old language after a change
LANGUAGE_CACHE_SIZE = 10_000  # guilds remembered (a few hundred kB at most)
DISCORD_DEFAULT_LOCALE = "en-US"  # every guild that chose none: stored as "" (no row made)


def stored_locale(locale: str) -> str:
    """A preferred locale as storage keeps it: Discord's default as "", both meaning English."""
    return "" if locale == DISCORD_DEFAULT_LOCALE else locale[:16]


class GuildLanguages:
    """The stored language code of each guild ("" = Discord's preferred locale), cached."""

    def __init__(
        self,
        storage: Storage,
        *,
        clock: Callable[[], float] = time.monotonic,
        ttl: float = LANGUAGE_TTL,
        size: int = LANGUAGE_CACHE_SIZE,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.ttl = ttl
        self.size = size
        self._known: OrderedDict[int, tuple[GuildSettings, float]] = OrderedDict()
        self._changes = 0  # forget() calls: a read that began before one is not kept
        self._locales: dict[int, str] = {}  # preferred locales this process stored or found
        self.reads = 0  # storage reads (tests, figures)

    async def stored(self, guild_id: int) -> str:
        """The guild's stored language; from storage when not known or older than ``ttl``
        (while storage fails: the last read, however old, else "" and nothing is remembered)."""
        return (await self.settings(guild_id)).language

    async def song_links_shown(self, guild_id: int) -> bool:
        """Whether the guild shows "Find this song" (``/onair settings song_links:``)."""
        return (await self.settings(guild_id)).song_links

    async def settings(self, guild_id: int) -> GuildSettings:
        now = self.clock()
        known = self._known.get(guild_id)
        if known is not None and now - known[1] < self.ttl:
            self._known.move_to_end(guild_id)
            return known[0]
        self.reads += 1
        changes = self._changes
        try:
            settings = await self.storage.guild_settings(guild_id)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error, _LOGGER, "a guild's language not read: %s", error
            )
            return known[0] if known is not None else GuildSettings(guild_id)
        if changes != self._changes:
            return settings  # changed meanwhile: what was read may be the old settings
        self._known[guild_id] = (settings, now)
        self._known.move_to_end(guild_id)
        while len(self._known) > self.size:
            self._known.popitem(last=False)
        return settings

    async def seen(self, guilds: Iterable[tuple[int, str]]) -> int:
        """The gateway showed these (guild id, preferred locale) pairs: store those that differ
        from storage, all in one transaction; how many it stored. A start of thousands of
        guilds is one read of the stored locales and writes only what changed; a guild seen
        again with the same locale costs nothing."""
        new = {g: stored_locale(locale) for g, locale in guilds}
        new = {g: locale for g, locale in new.items() if self._locales.get(g) != locale}
        if not new:
            return 0
        known = await self.storage.preferred_locales()
        changed = [(g, locale) for g, locale in new.items() if known.get(g, "") != locale]
        await self.storage.save_preferred_locales(changed)
        self._locales.update(new)
        for guild_id, _ in changed:
            self.forget(guild_id)
        return len(changed)

    def forget(self, guild_id: int) -> None:
        """The guild's language changed here: the next post reads it again."""
        self._changes += 1
        self._known.pop(guild_id, None)

    def __len__(self) -> int:
        return len(self._known)
