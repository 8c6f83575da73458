"""Live and offline alerts decided from a station's polls, on plain values (no clock, no I/O).

Each poll is one :class:`Observation`; :func:`evaluate` turns the stored :class:`AlertState` and
it into the next state and the alerts due. An alert's key names its event (the live show's play
key with its start as the station reports it, the outage's first failed poll as stored), so
whichever process or run evaluates it names it alike and the outbox posts it once; the state's
save is a compare-and-set besides (storage), so two evaluations from one state record once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..station import StationInfo
from ..storage.models import AlertState

AlertKind = Literal["live_start", "live_end", "down", "back"]
NOT_PLAYING = "nothing is playing"


@dataclass(frozen=True, slots=True)
class Observation:
    """One poll: the info when the station answered, else what failed."""

    info: StationInfo | None
    error: str = ""

    @property
    def problem(self) -> str:
        """Why the station counts as down ('' = it is up and playing)."""
        if self.info is None:
            return self.error or "not answering"
        return "" if playing(self.info) else NOT_PLAYING


@dataclass(frozen=True, slots=True)
class AlertEvent:
    kind: AlertKind
    key: str  # the event's name, the same in every process and run
    at: float  # unix seconds
    title: str = ""  # live: the show
    since: float | None = None  # down/back: the outage's start; live_end: the show's
    reason: str = ""  # down: what failed


def playing(info: StationInfo) -> bool:
    """Something is on air: a title, and a playback state (when reported) of ``play``."""
    state = (info.playback.state or "").casefold() if info.playback else ""
    return bool(info.on_air_title) and state in ("", "play", "playing")


def live_show(info: StationInfo) -> tuple[str, str, bool] | None:
    """(key, title, whether the key names the airing) of the live show on air, None when none
    is. The key is the play's claim key, which holds its start when the station reports one
    (or it is estimated from the position): then every process names the airing alike."""
    if not info.is_live:
        return None
    play = info.current_play()
    # An untitled show keeps an empty title, worded when shown in the guild's language
    # ("Live show", "Ao vivo"); its key keeps the English words it has always had.
    title = (play.display if play else None) or info.on_air_title or ""
    key = play.claim_key if play else f"live|{(title or 'Live show').casefold()}"
    return key, title, play is not None and play.started is not None


def evaluate(
    state: AlertState, seen: Observation, now: float, offline_after: float
) -> tuple[AlertState, list[AlertEvent]]:
    """The next state and the alerts due. Down: only once the outage has lasted
    ``offline_after``; back: only for an outage that lasted that long (flapping posts nothing).

    Live shows are followed while the station plays. A poll that finds nothing playing, or no
    answer, is part of an outage and changes nothing of the show until the outage has lasted
    ``offline_after`` (one-poll blips mid-show neither end it nor start it again); then the
    show has ended when the outage began, posted with the down alert. The same airing coming
    back afterwards (the same start by the station's clock) is not announced again, as its
    Scheduled Event is not made again; a show the station does not date cannot be told from a
    new airing, and is one."""
    events: list[AlertEvent] = []
    problem = seen.problem
    if problem:
        if state.down_since is None:
            state = replace(state, down_since=now, down_reason=problem, down_posted=False)
        assert state.down_since is not None
        if not state.down_posted and now - state.down_since >= offline_after:
            if state.live_key and not state.live_ended:
                events.append(_ended(state, state.down_since))
                state = replace(state, live_ended=True)
            events.append(
                AlertEvent(
                    "down",
                    f"down|{state.down_since:.3f}",
                    now,
                    since=state.down_since,
                    reason=state.down_reason,
                )
            )
            state = replace(state, down_posted=True)
        return state, events  # nothing on air (or no answer): the show goes on meanwhile
    if state.down_since is not None:
        if now - state.down_since >= offline_after:
            events.append(
                AlertEvent("back", f"back|{state.down_since:.3f}", now, since=state.down_since)
            )
        state = replace(state, down_since=None, down_reason="", down_posted=False)
    assert seen.info is not None
    show = live_show(seen.info)
    key, title, dated = show if show else ("", "", False)
    if key == state.live_key and (dated or not state.live_ended):
        return state, events  # the same airing (one whose end was posted stays ended)
    if state.live_key and not state.live_ended:
        events.append(_ended(state, now))
    if key:
        # Dated by the station: the key alone names this airing, alike in every process
        # (two evaluating it during a watch handover record one post). Undated: the same
        # show next week has the same key, so the airing is named by when it was first seen.
        name = f"live_start|{key}" if dated else f"live_start|{_airing(now)}|{key}"
        events.append(AlertEvent("live_start", name, now, title=title))
    state = replace(
        state,
        live_key=key,
        live_title=title,
        live_since=now if key else None,
        live_ended=False,
    )
    return state, events


def _ended(state: AlertState, at: float) -> AlertEvent:
    """The end of the show ``state`` follows, at ``at``: when another play came on, or when
    the outage that lasted ``offline_after`` began."""
    return AlertEvent(
        "live_end",
        f"live_end|{_airing(state.live_since)}|{state.live_key}",
        at,
        title=state.live_title,
        since=state.live_since,
    )


def _airing(since: float | None) -> str:
    """The show's airing, as first seen: a station may not say when a live show started, and
    the same show comes again next week. Stored with the state in the same transaction as the
    alert, so every later evaluation names it alike."""
    return f"{since:.3f}" if since is not None else "-"
