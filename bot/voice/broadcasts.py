"""The registry by station of :class:`StationBroadcast` every guild shares (one decoder per
station, however many guilds play it)."""

from __future__ import annotations

import asyncio
from typing import Unpack

import aiohttp

from .broadcast import WATCHDOG, BroadcastStats, StationBroadcast, Tuning
from .source import StationAudio
from .stream import OpenedStream, StreamGuard


class Broadcasts:
    """Station slug → :class:`StationBroadcast`, shared by every guild."""

    def __init__(
        self, ffmpeg: str, *, session: aiohttp.ClientSession, **tuning: Unpack[Tuning]
    ) -> None:
        self.ffmpeg = ffmpeg
        self.session = session
        self.watchdog = tuning.get("watchdog", WATCHDOG)
        self._tuning = tuning
        self._broadcasts: dict[str, StationBroadcast] = {}

    def audio_for(
        self,
        station: str,
        stream_url: str,
        first: OpenedStream | None = None,
        *,
        guard: StreamGuard | None = None,
    ) -> StationAudio:
        """A new source playing ``station`` (its decoder starts if it is not running, on
        ``first`` when given: the probe's open stream, taken over here, played or closed).
        ``guard`` (the station's URL policy) checks every URL and redirect hop the decoder
        opens. Raises :class:`StreamUnreachable` for a URL that cannot be played."""
        try:
            return self._audio_for(station, stream_url, first, guard)
        except BaseException:
            if first is not None:
                first.close()
            raise

    def _audio_for(
        self, station: str, stream_url: str, first: OpenedStream | None, guard: StreamGuard | None
    ) -> StationAudio:
        broadcast = self._broadcasts.get(station)
        if broadcast is not None and guard is not None:
            broadcast.guard = guard
        if broadcast is None:
            broadcast = StationBroadcast(
                station,
                stream_url,
                self.ffmpeg,
                session=self.session,
                guard=guard,
                **self._tuning,
            )
            self._broadcasts[station] = broadcast
        else:
            broadcast.retarget(stream_url)
        return broadcast.audio(first)

    def get(self, station: str) -> StationBroadcast | None:
        return self._broadcasts.get(station)

    def is_running(self, station: str) -> bool:
        broadcast = self._broadcasts.get(station)
        return broadcast is not None and broadcast.running

    def retarget(self, station: str, stream_url: str, *, guard: StreamGuard | None = None) -> bool:
        """``station``'s stream changed: its running decoder restarts on ``stream_url`` at
        once (through ``guard`` when given). False when no decoder runs for it."""
        broadcast = self._broadcasts.get(station)
        if broadcast is None or not broadcast.running:
            return False
        if guard is not None:
            broadcast.guard = guard
        broadcast.retarget(stream_url)
        return True

    def stats(self) -> dict[str, BroadcastStats]:
        return {station: broadcast.stats() for station, broadcast in self._broadcasts.items()}

    async def close(self) -> None:
        broadcasts = list(self._broadcasts.values())
        self._broadcasts.clear()
        await asyncio.gather(*(broadcast.close() for broadcast in broadcasts))
