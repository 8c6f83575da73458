"""What ``/onair vote`` sets up, and the tick that opens each guild's slot and ends its poll.

Each slot's poll is claimed in storage by its key (guild and slot start) before it is posted,
so a fleet posts one poll per slot; each later step (post, end, close) is leased and moves the
row from one state to the next, so one process ends it and one request is made per finished
poll. A poll open when OnAir stops is ended at the next tick after it starts again: on time,
or late, once. A poll posted by a run that died before recording it is found in the channel
(its question and answers) before the slot is posted again or given up, since Discord keeps a
nonce only minutes. Only the process serving a guild's shard runs its votes (its language and
channels are in that process's cache); a guild never has two polls open at once.
Discord counts the votes; OnAir only reads ``poll.results`` after ending it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import math
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Protocol

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..errors import BadInput
from ..requests.service import RequestService
from ..scheduled.outbox import LoopWords, repeat
from ..station import RequestTrack, StationError, normalise_title
from ..storage import SongVote, Storage, VotePoll
from ..storage.votes import CLOSING, OPEN, OPENING
from ..util.i18n import ENGLISH, Lang
from ..util.tasks import stop_task
from ..util.text import plain, safe
from .tally import EMPTY, TIE, WON, Outcome, Tally, decide

_LOGGER = logging.getLogger("onair.votes")
TICK = 15.0  # seconds between looks at the slots and the polls
TICK_WORDS = LoopWords("the song vote tick failed", "could not look at the song votes (%s)")
LEASE = 60.0  # seconds a process holds a poll while it posts or ends it
MIN_LEFT = 60.0  # a slot with less of its vote left than this is skipped, not opened late
CONCURRENCY = 4  # guilds a tick works on at once: one slow station delays no other guild
FINAL_WAIT = 300.0  # seconds past the end OnAir waits for Discord's final count
ANSWERS_MIN, ANSWERS_MAX = 3, 5
QUESTION_MAX, ANSWER_MAX = 300, 55  # Discord's limits for a poll's text
EVERY_MINUTES = (10, 1440)  # how often a vote may run
# How long it may run: the shortest leaves a minute past MIN_LEFT, so ticks every TICK open it.
LENGTH_MINUTES = (2, 720)
# Words most song titles and artists hold: what a vote searches for when the station's own
# artists give too few songs (a station's search matches words anywhere in "Artist - Title").
FALLBACK_SEEDS = ("the", "love", "night", "you", "and")

Languages = Callable[[int], Awaitable[Lang]]


class PollError(Exception):
    """Discord refused or failed a poll call; ``final`` when trying again cannot help, and
    ``lasting`` when no later poll in that channel can help either until an admin acts (the
    permission taken away, the channel gone or one without polls): the reason, in English, is
    what the guild's paused votes show."""

    def __init__(self, reason: str, *, final: bool, lasting: bool = False) -> None:
        super().__init__(reason)
        self.final = final or lasting
        self.lasting = lasting


class PollSender(Protocol):
    """The one place song votes meet Discord (``bot.delivery.votes``)."""

    async def post_poll(
        self,
        channel_id: int,
        content: str,
        question: str,
        answers: list[str],
        *,
        hours: int,
        nonce: str,
    ) -> int:
        """Post the poll; its message id. :class:`PollError` when it cannot."""

    async def end_poll(self, channel_id: int, message_id: int) -> Tally | None:
        """End the poll (ended already: fine) and read Discord's count; None when the message
        is gone."""

    async def read_poll(self, channel_id: int, message_id: int) -> Tally | None:
        """Read an ended poll's count again; None when the message is gone."""

    async def find_poll(
        self, channel_id: int, question: str | None, answers: list[str], since: float
    ) -> int | None:
        """OnAir's own poll with these answers (and ``question``, unless None) posted in the
        channel since ``since``: its message id; None when there is none or it cannot be
        looked for."""

    async def say(self, channel_id: int, text: str) -> None:
        """One line in the channel (best effort)."""

    async def server_name(self, guild_id: int) -> str:
        """The guild's name as Discord knows it."""


@dataclass(frozen=True, slots=True)
class VoteStatus:
    vote: SongVote | None
    next_at: float | None


def slot_key(guild_id: int, slot: float) -> str:
    return f"vote|{guild_id}|{int(slot)}"


def current_slot(vote: SongVote, now: float) -> float | None:
    """The start of the latest slot at or before ``now`` (slots every ``every`` seconds from
    ``since``), or None before the first."""
    if now < vote.since:
        return None
    return vote.since + math.floor((now - vote.since) / vote.every) * vote.every


class VoteService:
    """Song votes for every guild that has them, run by one tick in each process."""

    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        requests: RequestService,
        sender: PollSender,
        *,
        languages: Languages | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.requests = requests
        self.sender = sender
        self.languages = languages
        self.clock = clock
        self.owner = secrets.token_hex(8)  # this process, as the leases name it
        self._task: asyncio.Task[None] | None = None
        # Each guild's latest slot with too few songs to offer (not searched again): one a guild.
        self._skipped: dict[int, str] = {}
        self._ended: set[int] = set()  # polls this process ended, waiting for Discord's count
        self._failing: dict[int, str] = {}  # each guild's failure logged last (logged once)
        self._ticking = asyncio.Lock()  # one tick at a time in this process
        self._gate = asyncio.Semaphore(CONCURRENCY)

    async def start(
        self, *, every: float = TICK, ready: Callable[[], Awaitable[object]] | None = None
    ) -> None:
        """Tick in the background: once ``ready`` (connected, the guilds cached) and then
        every ``every`` seconds. A poll that ended while OnAir was down is ended at the first
        tick, late, once; start-up never waits for it."""
        self._task = asyncio.create_task(self._run(every, ready))

    async def _run(self, every: float, ready: Callable[[], Awaitable[object]] | None) -> None:
        if ready is not None:
            await ready()
        await repeat(every, self.tick, self.storage, _LOGGER, TICK_WORDS, at_once=True)

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None

    def _handles(self, guild_id: int) -> bool:
        """A guild of this process's shards: its cache knows the guild's language and
        channels. The claims keep each step once however many processes serve a shard."""
        return self.settings.handles_guild(guild_id)

    async def _lang(self, guild_id: int) -> Lang:
        return ENGLISH if self.languages is None else await self.languages(guild_id)

    # /onair vote ------------------------------------------------------------------------

    async def configure(
        self, guild_id: int, channel_id: int, station: StationConfig, every: int, length: int
    ) -> SongVote:
        """Turn the guild's votes on (or change them): ``every`` and ``length`` in minutes,
        a vote shorter than the time between two. BadInput when the station takes no
        requests here or the times do not fit."""
        name = safe(station.name, limit=80)
        if not self.requests.requests_allowed(station, guild_id):
            raise BadInput(errors.VOTES_NEED_REQUESTS, station=name)
        if not await self.requests.enabled(guild_id, station):
            raise BadInput(errors.VOTES_REQUESTS_OFF, station=name)
        low, high = EVERY_MINUTES
        shortest, longest = LENGTH_MINUTES
        if not low <= every <= high or not shortest <= length <= longest or length >= every:
            raise BadInput(
                errors.VOTE_TIMES, low=low, high=high, shortest=shortest, longest=longest
            )
        vote = SongVote(
            guild_id, channel_id, station.slug, every * 60.0, length * 60.0, self.clock()
        )
        vote = dataclasses.replace(vote, since=await self._since(vote))
        await self.storage.save_song_vote(vote)
        return vote

    async def _since(self, vote: SongVote) -> float:
        """When the schedule starts: unchanged when the settings are (the running slot is
        the same slot), else now, or once the guild's running poll ends."""
        stored = await self.storage.song_votes(vote.guild_id)
        if stored and stored[0] == dataclasses.replace(vote, since=stored[0].since):
            return stored[0].since
        running = await self.storage.unclosed_vote_poll(vote.guild_id)
        return vote.since if running is None else max(vote.since, running.ends_at)

    async def stations(self) -> set[str]:
        """The stations votes offer songs of (watched, so their plays reach the history)."""
        return {v.station for v in await self.storage.song_votes() if self._handles(v.guild_id)}

    async def turn_off(self, guild_id: int) -> bool:
        return await self.storage.remove_song_vote(guild_id)

    async def status(self, guild_id: int) -> VoteStatus:
        votes = await self.storage.song_votes(guild_id)
        if not votes:
            return VoteStatus(None, None)
        vote = votes[0]
        if vote.paused_reason is not None:
            return VoteStatus(vote, None)  # no next vote until an admin runs /onair vote
        slot = current_slot(vote, self.clock())
        return VoteStatus(vote, vote.since if slot is None else slot + vote.every)

    # The tick ---------------------------------------------------------------------------

    async def tick(self) -> None:
        """Act on every poll that is due (posted by a process that died, or past its end),
        then open every guild's current slot not opened yet. Guilds are worked on a few at a
        time; one guild's failure is logged (once per cause) and skips no other guild."""
        async with self._ticking:
            due = await self.storage.due_vote_polls(self.clock())
            await self._each([(p.guild_id, partial(self._advance_now, p)) for p in due])
            votes = await self.storage.song_votes()
            await self._each([(v.guild_id, partial(self._open_now, v)) for v in votes])
            kept = {v.guild_id for v in votes}
            self._failing = {g: c for g, c in self._failing.items() if g in kept}
            self._skipped = {g: k for g, k in self._skipped.items() if g in kept}

    async def _advance_now(self, poll: VotePoll) -> None:
        await self._advance(poll, self.clock())

    async def _open_now(self, vote: SongVote) -> None:
        await self._open_slot(vote, self.clock())

    async def _each(self, work: list[tuple[int, Callable[[], Awaitable[None]]]]) -> None:
        async def guarded(guild_id: int, step: Callable[[], Awaitable[None]]) -> None:
            async with self._gate:
                try:
                    await step()
                except Exception as error:
                    self._failed(guild_id, error)

        await asyncio.gather(*(guarded(g, step) for g, step in work if self._handles(g)))

    def _failed(self, guild_id: int, error: Exception) -> None:
        if self.storage.is_storage_error(error):
            self.storage.health.warn(_LOGGER, TICK_WORDS.unavailable, error)
            return
        self._log_once(guild_id, type(error).__name__, "song vote for guild %d failed", error)

    def _log_once(self, guild_id: int, cause: str, message: str, error: Exception) -> None:
        """Log a guild's failure the first time its cause is seen (at DEBUG after that, until
        a poll of the guild is posted again)."""
        level = logging.DEBUG if self._failing.get(guild_id) == cause else logging.WARNING
        self._failing[guild_id] = cause
        traced = level == logging.WARNING and not isinstance(error, PollError)
        _LOGGER.log(level, message + " (%s)", guild_id, error, exc_info=error if traced else None)

    async def _open_slot(self, vote: SongVote, now: float) -> None:
        if vote.paused_reason is not None:
            return  # Discord refuses its polls for good: nothing is asked of it until fixed
        slot = current_slot(vote, now)
        if slot is None or now > slot + vote.length - MIN_LEFT:
            return  # before the first slot, or too little of this one left
        key = slot_key(vote.guild_id, slot)
        if self._skipped.get(vote.guild_id) == key or await self.storage.vote_poll_recorded(key):
            return
        if await self.storage.unclosed_vote_poll(vote.guild_id) is not None:
            return  # the guild's poll still runs (or awaits its count): never two at once
        station = self.registry.station(vote.station)
        if station is None or not await self.requests.enabled(vote.guild_id, station):
            return
        songs = await self._songs(station, key)
        if len(songs) < ANSWERS_MIN:
            self._skipped[vote.guild_id] = key
            _LOGGER.info("song vote for guild %d skipped: too few songs to offer", vote.guild_id)
            return
        poll = VotePoll(
            key,
            vote.guild_id,
            vote.channel_id,
            station.slug,
            slot,
            slot + vote.length,
            tuple((s.id, s.title) for s in songs),
        )
        if not await self.storage.claim_vote_poll(
            poll, owner=self.owner, lease_until=now + LEASE, now=now
        ):
            return  # another process claimed the slot first
        await self._post(poll, station)

    async def _songs(self, station: StationConfig, key: str) -> list[RequestTrack]:
        """3-5 songs the station's request search offers, found from the artists it played
        lately and has on its playlist (then common words); chosen at random (seeded by the
        slot), not the song on air."""
        seeds: list[str] = []
        since = datetime.fromtimestamp(self.clock(), UTC)
        plays = await self.storage.plays_between(station.slug, since - timedelta(hours=12), since)
        seeds += [p.artist for p in reversed(plays) if p.artist and not p.live]
        try:
            playlist = await self.registry.client(station).playlist()
            seeds += [i.artist for i in playlist.items if i.artist]
        except StationError:
            pass  # the history alone
        seeds = list(dict.fromkeys(s.strip() for s in seeds if s and s.strip()))[:8]
        seeds += FALLBACK_SEEDS  # searched only while the artists give too few songs
        try:
            found = await self.requests.vote_candidates(station, seeds, wanted=ANSWERS_MAX)
        except StationError as error:
            _LOGGER.info("song vote: %s could not be searched (%s)", station.slug, error)
            return []
        # The song on air, whole: as "Artist - Title" (a request search's form) or its title.
        on_air = {
            normalise_title(whole)
            for p in plays[-1:]
            for whole in (p.title, f"{p.artist} - {p.title}" if p.artist else "")
        } - {""}
        found = [t for t in found if normalise_title(t.title) not in on_air]
        chooser = random.Random(hashlib.sha256(key.encode()).digest())
        return chooser.sample(found, min(ANSWERS_MAX, len(found)))

    async def _question(self, poll: VotePoll, station: StationConfig) -> str:
        lang = await self._lang(poll.guild_id)
        question = lang.t("What should {station} play next?", station=plain(station.name, limit=80))
        return question[:QUESTION_MAX]

    def _answers(self, poll: VotePoll) -> list[str]:
        return [plain(title, limit=ANSWER_MAX) or "?" for _, title in poll.answers]

    async def _post(self, poll: VotePoll, station: StationConfig) -> None:
        lang = await self._lang(poll.guild_id)
        question = await self._question(poll, station)
        # Discord shows the poll's own expiry (whole hours): the content says when it ends.
        content = lang.t("🗳️ Song vote: it ends {when}.", when=f"<t:{int(poll.ends_at)}:R>")
        answers = self._answers(poll)
        hours = max(1, math.ceil((poll.ends_at - poll.opens_at) / 3600))
        nonce = hashlib.sha256(poll.key.encode()).hexdigest()[:25]
        try:
            message_id = await self.sender.post_poll(
                poll.channel_id,
                content,
                question,
                answers,
                hours=hours,
                nonce=nonce,
            )
        except PollError as error:
            if error.final:
                await self.storage.vote_poll_closed(
                    poll.key, self.owner, "failed", now=self.clock()
                )
            if error.lasting:
                await self._pause(poll, str(error))
                return
            self._log_once(poll.guild_id, str(error), "song vote for guild %d not posted", error)
            return  # else: the lease lapses and the poll is posted at a later look
        self._failing.pop(poll.guild_id, None)  # it works again: a new failure is logged
        await self.storage.vote_poll_opened(poll.key, self.owner, message_id, now=self.clock())

    async def _pause(self, poll: VotePoll, reason: str) -> None:
        """Pause the guild's votes with ``reason`` (shown by /onair status) so no later slot
        asks Discord again; /onair vote run again (the cause fixed) resumes them."""
        self._failing.pop(poll.guild_id, None)
        if await self.storage.pause_song_vote(poll.guild_id, poll.channel_id, reason):
            _LOGGER.warning(
                "song votes for guild %d paused: Discord refuses their polls (%s)",
                poll.guild_id,
                reason,
            )

    async def _advance(self, poll: VotePoll, now: float) -> None:
        taken = await self.storage.take_vote_poll(
            poll.key, (poll.state,), owner=self.owner, lease_until=now + LEASE, now=now
        )
        if taken is None:
            return  # another process has it
        if taken.state == OPENING:
            station = self.registry.station(taken.station)
            if await self._found_posted(taken, station, now):
                return  # recorded open: ended at its end like any other
            if station is None or now > taken.ends_at - MIN_LEFT:
                await self.storage.vote_poll_closed(taken.key, self.owner, "missed", now=now)
                return
            await self._post(taken, station)
            return
        if taken.state in (OPEN, CLOSING):
            await self._close(taken, now)

    async def _found_posted(
        self, poll: VotePoll, station: StationConfig | None, now: float
    ) -> bool:
        """A run that died after Discord took the poll but before it was recorded left it in
        the channel: found (by its question and answers; any question once the station is
        gone), it is recorded open, so it is never posted twice nor left running."""
        question = None if station is None else await self._question(poll, station)
        found = await self.sender.find_poll(
            poll.channel_id, question, self._answers(poll), poll.opens_at
        )
        if found is None:
            return False
        await self.storage.vote_poll_opened(poll.key, self.owner, found, now=now)
        _LOGGER.info("song vote for guild %d: found the poll posted before", poll.guild_id)
        return True

    async def _close(self, poll: VotePoll, now: float) -> None:
        try:
            if poll.message_id in self._ended:
                tally = await self.sender.read_poll(poll.channel_id, poll.message_id)
            else:
                tally = await self.sender.end_poll(poll.channel_id, poll.message_id)
                self._ended.add(poll.message_id)
        except PollError as error:
            if not error.final and now < poll.ends_at + FINAL_WAIT:
                await self.storage.vote_poll_reopened(poll.key, self.owner, now=now)
                return
            self._ended.discard(poll.message_id)
            await self.storage.vote_poll_closed(poll.key, self.owner, "failed", now=now)
            self._log_once(poll.guild_id, str(error), "song vote for guild %d not ended", error)
            return
        if tally is None:
            self._ended.discard(poll.message_id)
            await self.storage.vote_poll_closed(poll.key, self.owner, "gone", now=now)
            return
        if not tally.final and now < poll.ends_at + FINAL_WAIT:
            await self.storage.vote_poll_reopened(poll.key, self.owner, now=now)
            return  # Discord is still counting: read again at the next look
        self._ended.discard(poll.message_id)
        outcome = decide(tally, len(poll.answers))
        if not await self.storage.vote_poll_closed(poll.key, self.owner, outcome.stored, now=now):
            return
        line, result = await self._settle(poll, outcome)
        await self.storage.vote_poll_outcome(poll.key, result, now=self.clock())
        try:
            await self.sender.say(poll.channel_id, line[:2000])
        except PollError as error:
            _LOGGER.warning("song vote result for guild %d not posted (%s)", poll.guild_id, error)

    async def _settle(self, poll: VotePoll, outcome: Outcome) -> tuple[str, str]:
        """Ask for the winner (the poll is closed: asked once) and word what happened."""
        lang = await self._lang(poll.guild_id)
        titles = [safe(title, limit=100) for _, title in poll.answers]
        if outcome.kind == EMPTY:
            return lang.t("🗳️ Nobody voted, so no song is requested this time."), EMPTY
        if outcome.kind == TIE:
            tied = " · ".join(f"**{titles[i]}**" for i in outcome.answers)
            return lang.t(
                "🗳️ A tie between {songs}: no song is requested this time.", songs=tied
            ), TIE
        index = outcome.answers[0]
        track_id, title = poll.answers[index]
        station = self.registry.station(poll.station)
        if station is None:
            return lang.t("🗳️ The listeners chose **{song}**.", song=titles[index]), "no station"
        name = safe(station.name, limit=80)
        try:
            server = await self.sender.server_name(poll.guild_id)
            await self.requests.request_voted(
                guild_id=poll.guild_id,
                station=station,
                track=RequestTrack(track_id, title),
                server=server,
            )
        except BadInput as refused:
            reason = refused.said_in(lang).rstrip(".")
            text = lang.t(
                "🗳️ The listeners chose **{song}**, but it could not be requested: {reason}.",
                song=titles[index],
                reason=reason,
            )
            return text, "refused"
        except StationError as error:
            reason = errors.station_problem(error, lang=lang).rstrip(".")
            text = lang.t(
                "🗳️ The listeners chose **{song}**, but it could not be requested: {reason}.",
                song=titles[index],
                reason=reason,
            )
            return text, "refused"
        return (
            lang.t(
                "🗳️ The listeners chose **{song}**: requested on **{station}**.",
                song=titles[index],
                station=name,
            ),
            WON,
        )
