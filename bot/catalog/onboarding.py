"""A guild adds its own station: who may, whether the address and the key work, and storing it
(the key encrypted). No Discord here: the setup commands call it, tests can too."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from .. import errors
from ..config import Settings, StationConfig
from ..errors import BadInput
from ..guard.keybox import KeyBox
from ..guard.netguard import check_url
from ..inputs.zone import zone_input
from ..station import StationError
from ..station.apikey import key_problem
from ..station.hosts import SOURCES
from ..station.source import DEFAULT_KIND, KIND_NAMES, station_ref
from ..storage import GuildSettings, GuildStation, Storage
from ..util.i18n import ENGLISH, LANGUAGE_NAMES, Lang
from ..util.text import safe
from .languages import GuildLanguages
from .registry import StationRegistry, short_slug


def make_slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")[:32].strip("-")
    return slug or "station"


@dataclass(frozen=True, slots=True)
class StationRequest:
    """A guild's request to add a station, checked except for its key (asked for next)."""

    guild_id: int
    name: str
    base_url: str
    station_id: int | str  # checked for its kind (``station_ref``)
    zone: str
    kind: str = DEFAULT_KIND


class StationOnboarding:
    """Checks a request before the key is asked for, then validates the key with a live call
    and stores the station. One add at a time per guild, so concurrent submits cannot pass the
    station limit."""

    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        keybox: KeyBox,
        *,
        is_member: Callable[[int], bool],
        languages: GuildLanguages | None = None,
    ) -> None:
        self.settings = settings
        self.languages = languages  # told when a guild's language changes
        self.registry = registry
        self.storage = storage
        self.keybox = keybox
        self.is_member = is_member  # whether the bot is in the guild (not just its commands)
        self._adding: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)

    def refusal(self, guild_id: int, slug: str, owned: list[str]) -> BadInput | None:
        """Why this guild cannot add a station (not a member, or at its limit), else None."""
        if not self.is_member(guild_id):
            return BadInput(errors.NOT_A_MEMBER)
        if slug not in owned and len(owned) >= self.settings.max_guild_stations:
            return BadInput(errors.STATION_LIMIT, count=len(owned))
        return None

    def check_request(
        self,
        guild_id: int,
        name: str,
        base_url: str,
        station_id: int | str,
        zone: str,
        kind: str = DEFAULT_KIND,
    ) -> StationRequest:
        """The request, its URL and its station's name on the host of ``kind`` checked;
        BadInput (or UrlRefused) says why it cannot go on."""
        owned = [
            short_slug(s) for s in self.registry.visible(guild_id) if s.owner_guild == guild_id
        ]
        refusal = self.refusal(guild_id, make_slug(name), owned)
        if refusal is not None:
            raise refusal
        if kind not in SOURCES:
            raise BadInput(errors.KIND_NOT_READ, host=KIND_NAMES.get(kind, "?"))
        try:
            ref = station_ref(kind, station_id)
        except ValueError:
            raise BadInput(errors.STATION_REF_EXPECTED[kind]) from None
        url = check_url(base_url, self.registry.policy)
        zone_input(zone)
        return StationRequest(guild_id, name, url, ref, zone, kind)

    async def add(self, request: StationRequest, key: str, lang: Lang = ENGLISH) -> str:
        """Validate with a live `info` call, then store (key encrypted). Returns the reply, in
        the admin's language (``lang``)."""
        async with self._adding[request.guild_id]:
            return await self._add(request, key, lang)

    async def _add(self, request: StationRequest, key: str, lang: Lang) -> str:
        guild_id, name, base_url = request.guild_id, request.name, request.base_url
        station_id, zone = request.station_id, request.zone
        if key and not self.keybox.available:
            return lang.t(errors.NO_SECRET)
        problem = key_problem(key)
        if problem is not None:
            return lang.t(errors.BAD_KEY, problem=lang.t(problem))
        slug = make_slug(name)
        owned = [s.slug for s in await self.storage.guild_stations(guild_id)]
        refusal = self.refusal(guild_id, slug, owned)
        if refusal is not None:
            return refusal.said_in(lang)
        client = self.registry.guest_client(base_url, station_id, key or None, kind=request.kind)
        try:
            info = await client.info(max_age=0)
        except StationError as error:
            reason = errors.station_problem(error, detail=True, lang=lang)
            return lang.t(errors.ADD_FAILED, reason=reason)
        stored = GuildStation(
            guild_id,
            slug,
            name,
            base_url,
            station_id,
            self.keybox.encrypt(key) if key else None,
            zone,
            kind=request.kind,
        )
        await self.storage.save_guild_station(stored)
        self.registry.add_guild_station(stored, key or None)
        play = info.current_play()
        added = lang.t(
            "Added **{station}** (`{slug}`); the key works.",
            station=safe(name, limit=80),
            slug=slug,
        )
        if play is None:
            return added
        return added + " " + lang.t("On air now: {title}.", title=safe(play.display, limit=200))

    async def remove(self, guild_id: int, station: StationConfig) -> None:
        """Remove a station this guild added (BadInput for one of the bot's own)."""
        if station.owner_guild != guild_id:
            raise BadInput(errors.NOT_OURS)
        await self.storage.remove_guild_station(
            station.owner_guild, short_slug(station), station.slug
        )
        self.registry.remove_guild_station(station.slug)

    async def save_settings(
        self,
        guild_id: int,
        timezone: str | None,
        default_station: str | None,
        language: str | None = None,
        song_links: bool | None = None,
    ) -> GuildSettings:
        """Change the guild's time zone, default station, language and/or whether it shows
        "Find this song" (None keeps the stored one). The language is the admin's input: only
        one OnAir speaks is stored (Discord's choices are not enforced for a client that sends
        its own value)."""
        if language is not None and language not in LANGUAGE_NAMES:
            names = ", ".join(LANGUAGE_NAMES.values())
            raise BadInput(errors.UNKNOWN_LANGUAGE, languages=names)
        zone = zone_input(timezone).key if timezone else None
        current = await self.storage.guild_settings(guild_id)
        saved = GuildSettings(
            guild_id,
            zone or current.timezone,
            current.default_station if default_station is None else default_station,
            current.language if language is None else language,
            current.song_links if song_links is None else song_links,
        )
        await self.storage.save_guild_settings(saved)
        if self.languages is not None:
            self.languages.forget(guild_id)
        self.registry.set_default(guild_id, saved.default_station)
        return saved
