"""Delivering announcements with discord.py: post or card mode, role pings, clean failures."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import discord

from ..announcer.outbox import DeliveryError
from ..announcer.watcher import Announcement
from ..config import StationConfig
from ..config.examples import EXAMPLE_IDS, example_id_note
from ..history.likes import LikeService
from ..render.templated import for_subscription
from ..songlinks import SongLink, SongLinks, wanted, with_artwork
from ..storage import RequestCredit, Subscription
from ..ui.likes import LIKE_PREFIX, with_like_button
from ..ui.songlinks import with_song_link
from ..util.i18n import N_, guild_lang
from ..util.tasks import BackgroundTasks

_LOGGER = logging.getLogger("onair.announcer")

# Seconds a posted announcement waits for its song's link before going without it.
LINK_WAIT = 40.0


class RateGate:
    """A token bucket under Discord's global limit (50 requests/s), so a large fan-out does not
    run into 429s (which Discord counts toward a temporary ban) but paces itself instead.

    A ``deferrable`` request (a post's later link edit) takes a token only while no other
    request waits for one: announcements never queue behind link edits, which use what the
    announcements leave."""

    def __init__(self, rate: float = 48.0) -> None:
        self.rate = rate
        self.tokens = rate
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()
        self._deferred = asyncio.Lock()  # deferrable requests take turns among themselves
        self._urgent = 0  # requests waiting for a token that are not deferrable
        self._calm = asyncio.Event()  # set while ``_urgent`` is 0
        self._calm.set()

    def _take(self) -> float:
        """Take a token if there is one (0.0); else the seconds until there is."""
        now = time.monotonic()
        self.tokens = min(self.rate, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    async def acquire(self, *, deferrable: bool = False) -> None:
        if deferrable:
            await self._acquire_deferred()
            return
        self._urgent += 1
        self._calm.clear()
        try:
            async with self._lock:
                while True:
                    wait = self._take()
                    if not wait:
                        return
                    await asyncio.sleep(wait)
        finally:
            self._urgent -= 1
            if not self._urgent:
                self._calm.set()

    async def _acquire_deferred(self) -> None:
        """Never holds ``_lock`` while it waits, so a request that arrives meanwhile is
        served first."""
        async with self._deferred:
            while True:
                await self._calm.wait()
                if self._urgent:
                    continue  # one arrived between the event and this turn of the loop
                wait = self._take()
                if not wait:
                    return
                await asyncio.sleep(wait)


# Why a channel is paused: stored in English as is (the rows of earlier versions too) and
# translated where /onair status shows it (bot.render.paused).
PERMANENT = {
    403: N_("OnAir may not post there (Missing Permissions)"),
    404: N_("the channel no longer exists"),
}
NOT_A_TEXT_CHANNEL = N_("the target is not a text channel or thread")


def gone(status: int, channel_id: int) -> str:
    """Why Discord refused a channel for good; a 404 on an example id of config.example.toml
    says that, not that the channel was deleted."""
    if status == 404 and channel_id in EXAMPLE_IDS:
        return f"channel {example_id_note(channel_id)}"
    return PERMANENT[status]


# A resumed delivery looks this far back for its own unrecorded post: the messages since its
# detection (less CLOCK_SLACK seconds of clock difference with Discord), at most LOOKBACK.
LOOKBACK = 50
CLOCK_SLACK = 60.0
# Discord refused the message itself: sending it again can only fail again.
REFUSED = frozenset({400, 413})


async def text_channel(client: discord.Client, gate: RateGate, channel_id: int) -> Any | None:
    """The channel from discord.py's cache, else fetched (a token of ``gate`` first); None when
    it is not one messages go to. Discord's refusals of the fetch are the caller's."""
    channel = client.get_channel(channel_id)
    if channel is None:
        await gate.acquire()
        channel = await client.fetch_channel(channel_id)
    return channel if isinstance(channel, discord.abc.Messageable) else None


class DiscordDeliverer:
    """Sends through the bot's own client, so discord.py's rate limiter governs every call."""

    def __init__(
        self,
        client: discord.Client,
        *,
        tries: int = 3,
        gate: RateGate | None = None,
        likes: LikeService | None = None,
        links: SongLinks | None = None,
        links_shown: Callable[[int], Awaitable[bool]] | None = None,
        link_wait: float = LINK_WAIT,
    ) -> None:
        self.client = client
        self.likes = likes
        self.tries = tries
        self.gate = gate or RateGate()
        # "Find this song": on the post when known, else added by an edit once found.
        self.links = links if links is not None and links.enabled else None
        self.links_shown = links_shown
        self.link_wait = link_wait
        self._link_edits = BackgroundTasks(
            lambda error: _LOGGER.warning("song link not added: %r", error)
        )
        self._cards: dict[int, str] = {}  # card channel: the play its card shows
        # Card channel: its delivery and its link edits take turns, so a link edit's check
        # that the card still shows its play holds until its edit is made.
        self._card_turns: dict[int, asyncio.Lock] = {}

    async def _channel(self, channel_id: int) -> Any:
        try:
            channel = await text_channel(self.client, self.gate, channel_id)
        except discord.NotFound:
            raise DeliveryError(gone(404, channel_id), permanent=True) from None
        except discord.Forbidden:
            raise DeliveryError(PERMANENT[403], permanent=True) from None
        if channel is None:
            raise DeliveryError(NOT_A_TEXT_CHANNEL, permanent=True)
        return channel

    async def deliver(
        self,
        sub: Subscription,
        announcement: Announcement,
        station: StationConfig,
        *,
        nonce: str,
        resumed: bool = False,
    ) -> int | None:
        """Post or edit. ``nonce`` goes with every post (discord.py then sets ``enforce_nonce``):
        a post repeated within Discord's nonce window, by a retry here or by the next run after
        a crash, returns the first message instead of creating a second one. That window is
        "a few minutes" and a play may be posted up to ``max_delivery_age`` late, so a
        ``resumed`` delivery first looks for its own earlier post in the channel.

        The song's link goes with the post when it is known; else it is looked up beside the
        post and added by an edit when found (never waited for). A card is delivered in its
        channel's turn (``_card_turn``)."""
        if sub.mode == "card":
            async with self._card_turn(sub.channel_id):
                return await self._deliver(sub, announcement, station, nonce, resumed)
        return await self._deliver(sub, announcement, station, nonce, resumed)

    def _card_turn(self, channel_id: int) -> asyncio.Lock:
        """One lock per card channel (a few bytes each, as many as there are card channels):
        other channels never wait on it, and nothing that holds it waits for another one."""
        return self._card_turns.setdefault(channel_id, asyncio.Lock())

    async def _deliver(
        self,
        sub: Subscription,
        announcement: Announcement,
        station: StationConfig,
        nonce: str,
        resumed: bool,
    ) -> int | None:
        link, later = await self._song_link(sub, announcement)
        embed, view, content, users = await self._render(sub, announcement, station, link)
        if sub.mode == "card":
            self._cards[sub.channel_id] = announcement.play.claim_key
        message_id = await self._send(
            sub, announcement, embed, view, content, users, nonce, resumed
        )
        if later and message_id is not None:
            self._link_edits.spawn(self._add_link(sub, announcement, station, message_id))
        return message_id

    async def _send(
        self,
        sub: Subscription,
        announcement: Announcement,
        embed: discord.Embed,
        view: discord.ui.View | None,
        content: str | None,
        users: tuple[int, ...],
        nonce: str,
        resumed: bool,
    ) -> int | None:
        mentions = allowed_mentions(sub, users)
        last_error: discord.HTTPException | None = None
        for attempt in range(self.tries):
            try:
                channel = await self._channel(sub.channel_id)
                if resumed:
                    earlier = await earlier_post(
                        self.client,
                        self.gate,
                        channel,
                        embed,
                        announcement.detected_at,
                        marker=like_marker(view),
                    )
                    if earlier is not None:
                        if sub.mode == "card":
                            await self._retire_card(channel, sub.card_message_id, earlier)
                        return earlier
                    resumed = False  # looked once: a retry within this call relies on the nonce
                if sub.mode == "card":
                    return await self._card(channel, sub, embed, view, content, mentions, nonce)
                return await post_message(
                    self.gate,
                    channel,
                    content,
                    embed=embed,
                    view=view,
                    mentions=mentions,
                    nonce=nonce,
                )
            except discord.HTTPException as error:
                if error.status in PERMANENT:
                    reason = gone(error.status, sub.channel_id)
                    raise DeliveryError(reason, permanent=True) from None
                if error.status in REFUSED:
                    reason = refused(error)
                    raise DeliveryError(reason, permanent=False, final=True) from None
                last_error = error
                await asyncio.sleep(0.5 * 2**attempt)
        raise DeliveryError(f"Discord kept failing ({last_error})", permanent=False)

    async def stop_follow_ups(self) -> None:
        """Cancel the link edits still waiting (the announcer stops): a post keeps no link."""
        pending = list(self._link_edits)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self.links is not None:
            await self.links.stop()

    async def _song_link(
        self, sub: Subscription, announcement: Announcement
    ) -> tuple[SongLink | None, bool]:
        """The song's link if known now, and whether to look it up and add it later."""
        if self.links is None or not wanted(announcement.play):
            return None, False
        if self.links_shown is not None and not await self.links_shown(sub.guild_id):
            return None, False
        link = self.links.known(announcement.play)
        return link, link is None

    async def _add_link(
        self, sub: Subscription, announcement: Announcement, station: StationConfig, message_id: int
    ) -> None:
        """The post again with its song's link (and artwork where the station gave none), once
        found within ``link_wait``; a card only while it still shows this play."""
        if self.links is None:
            return
        try:
            link = await asyncio.wait_for(self.links.find(announcement.play), self.link_wait)
        except TimeoutError:
            return
        if link is None:
            return
        if not self._shows(sub, announcement):
            return  # the card moved on to the next play
        embed, view, _, _ = await self._render(sub, announcement, station, link)
        try:
            channel = await self._channel(sub.channel_id)
            await self.gate.acquire(deferrable=True)
            if sub.mode != "card":
                await channel.get_partial_message(message_id).edit(embed=embed, view=view)
                return
            async with self._card_turn(sub.channel_id):
                if self._shows(sub, announcement):  # nothing awaited between check and edit
                    await channel.get_partial_message(message_id).edit(embed=embed, view=view)
        except (discord.HTTPException, DeliveryError) as error:
            _LOGGER.info("song link not added to message %s: %s", message_id, error)

    def _shows(self, sub: Subscription, announcement: Announcement) -> bool:
        """Whether the message of ``announcement`` still shows it: a post always, a card until
        the channel's next play is delivered."""
        return sub.mode != "card" or self._cards.get(sub.channel_id) == announcement.play.claim_key

    async def _render(
        self,
        sub: Subscription,
        announcement: Announcement,
        station: StationConfig,
        link: SongLink | None = None,
    ) -> tuple[discord.Embed, discord.ui.View | None, str | None, tuple[int, ...]]:
        """The subscription's templates over the built-in layout, the ❤ button (left out
        while storage fails: the announcement does not wait for a like count), the song's link
        and the requesters its content pings."""
        play_id, count = await self._like_state(station.slug, announcement)
        lang = await guild_lang(self.client, sub.guild_id)
        rendered = for_subscription(
            sub,
            with_artwork(announcement.info, link),
            announcement.play,
            station.name,
            lang,
            likes=count,
            requested_by=tuple(c.name for c in credits_in(sub, announcement) if not c.voted),
            voted_in=next((c.name for c in credits_in(sub, announcement) if c.voted), None),
            ping_users=pinged(sub, announcement),
        )
        view = with_song_link(with_like_button(rendered.view, play_id, lang), link, lang)
        return rendered.embed, view, rendered.content, rendered.pinged

    async def _like_state(self, slug: str, announcement: Announcement) -> tuple[int | None, int]:
        if self.likes is None:
            return None, 0
        try:
            play_id = await self.likes.play_id(slug, announcement.play)
            return play_id, await self.likes.count(play_id) if play_id is not None else 0
        except Exception as error:
            if not self.likes.storage.is_storage_error(error):
                raise
            return None, 0

    async def _card(
        self,
        channel: Any,
        sub: Subscription,
        embed: discord.Embed,
        view: discord.ui.View | None,
        content: str | None,
        mentions: discord.AllowedMentions,
        nonce: str,
    ) -> int:
        """Edit the card in place while it is the newest message; else re-post it at the bottom.

        Idempotent on retry: an edit repeated writes the same card again, a re-post carries the
        play's nonce (Discord returns the first post), and deleting the old card twice is a
        404 that is ignored."""
        card_id = sub.card_message_id
        if card_id:
            await self.gate.acquire()
            newest = [m async for m in channel.history(limit=1)]
            if newest and newest[0].id == card_id:
                try:
                    await self.gate.acquire()
                    await channel.get_partial_message(card_id).edit(
                        content=content, embed=embed, view=view, allowed_mentions=mentions
                    )
                    return card_id
                except discord.NotFound:
                    pass  # deleted by someone: post a new card
        kwargs: dict[str, Any] = {"embed": embed, "allowed_mentions": mentions, "nonce": nonce}
        if view is not None:
            kwargs["view"] = view
        await self.gate.acquire()
        message = await channel.send(content, **kwargs)
        await self._retire_card(channel, card_id, message.id)
        return int(message.id)

    async def _retire_card(self, channel: Any, card_id: int | None, new_id: int) -> None:
        """Delete the previous card once a new one is posted (gone already: nothing to do)."""
        if card_id and card_id != new_id:
            await self.gate.acquire()
            with contextlib.suppress(discord.HTTPException):
                await channel.get_partial_message(card_id).delete()


def credits_in(sub: Subscription, announcement: Announcement) -> list[RequestCredit]:
    """The requesters a channel names: its own guild's only (a name typed in one guild never
    reaches another)."""
    return [c for c in announcement.requested_by if c.guild_id == sub.guild_id]


def pinged(sub: Subscription, announcement: Announcement) -> tuple[tuple[int, str], ...]:
    """The requesters who opted in to a ping, each once: (user id, display name)."""
    wanted: dict[int, str] = {}
    for credit in credits_in(sub, announcement):
        if credit.ping:
            wanted.setdefault(credit.user_id, credit.name)
    return tuple(wanted.items())


def allowed_mentions(sub: Subscription, users: tuple[int, ...]) -> discord.AllowedMentions:
    """Only what the channel chose (its role) and the requesters the content pings (those who
    opted in, as many as fit): nothing else in the message can ping, whatever a template or a
    name holds."""
    people = [discord.Object(u) for u in users]
    roles = [discord.Object(sub.mention_role)] if sub.mention_role else False
    if not people and not roles:
        return discord.AllowedMentions.none()
    return discord.AllowedMentions(everyone=False, users=people or False, roles=roles)


async def post_message(
    gate: RateGate,
    channel: Any,
    content: str | None,
    *,
    embed: discord.Embed,
    view: discord.ui.View | None,
    mentions: discord.AllowedMentions,
    nonce: str,
) -> int:
    """Post one message under ``nonce`` (a repeat within Discord's window returns the first),
    paced by the gate; its id. Announcements and scheduled posts both send with it."""
    kwargs: dict[str, Any] = {"embed": embed, "allowed_mentions": mentions, "nonce": nonce}
    if view is not None:
        kwargs["view"] = view
    await gate.acquire()
    message = await channel.send(content, **kwargs)
    return int(message.id)


def refused(error: discord.HTTPException) -> str:
    """Why Discord refused a message itself (sending it again can only fail again)."""
    return f"Discord refused the message ({error.status}, code {error.code})"


async def earlier_post(
    client: discord.Client,
    gate: RateGate,
    channel: Any,
    embed: discord.Embed,
    since: float,
    *,
    marker: str | None = None,
) -> int | None:
    """OnAir's own message with ``embed`` among the channel's messages since ``since`` (one
    request): what a run that died between send and mark left unrecorded. ``marker`` is a
    component id only this post carries (the play's ❤ button): it finds the post though its
    text changed since (a template's ``{likes}``). Interaction replies (``/nowplaying``
    carries the same ❤) are not posts. None when there is none or it cannot be looked for
    (e.g. no Read Message History: then the nonce is all there is to go on). Announcements
    and scheduled posts both look with it."""
    return await own_message_since(
        client,
        gate,
        channel,
        since,
        lambda message: (
            any(_same(e, embed) for e in message.embeds)
            or (marker is not None and marker in _component_ids(message))
        ),
    )


async def own_message_since(
    client: discord.Client,
    gate: RateGate,
    channel: Any,
    since: float,
    matches: Callable[[discord.Message], bool],
) -> int | None:
    """The first of OnAir's own messages (not a webhook's) among the channel's messages since
    ``since`` (less CLOCK_SLACK, at most LOOKBACK, one request) that ``matches``; None when
    there is none or Discord does not let OnAir look."""
    me = client.user
    if me is None:
        return None
    start = datetime.fromtimestamp(since - CLOCK_SLACK, UTC)
    after = discord.Object(id=discord.utils.time_snowflake(start))
    try:
        await gate.acquire()
        async for message in channel.history(limit=LOOKBACK, after=after):
            if message.author.id != me.id or message.webhook_id is not None:
                continue
            if matches(message):
                return int(message.id)
    except discord.HTTPException:
        return None
    return None


def _component_ids(message: discord.Message) -> set[str]:
    ids: set[str] = set()
    for row in message.components:
        for item in getattr(row, "children", ()):
            custom_id = getattr(item, "custom_id", None)
            if custom_id:
                ids.add(str(custom_id))
    return ids


def like_marker(view: discord.ui.View | None) -> str | None:
    """The ❤ button's id in ``view`` (it names the play), if it has one."""
    for item in view.children if view is not None else ():
        custom_id = getattr(item, "custom_id", None)
        if isinstance(custom_id, str) and custom_id.startswith(LIKE_PREFIX):
            return custom_id
    return None


def _same(posted: discord.Embed, ours: discord.Embed) -> bool:
    """The same announcement: rendered from the same stored snapshot, so the text matches."""
    return (
        posted.title == ours.title
        and posted.description == ours.description
        and posted.timestamp == ours.timestamp
        and posted.footer.text == ours.footer.text
    )
