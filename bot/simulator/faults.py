"""Faults the simulator can inject, switchable at run time (from tests or the admin endpoint)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FAULT_KINDS = frozenset(
    {
        "status",  # any HTTP status (with optional Retry-After and body)
        "delay",  # answer after `seconds` (past the client's timeout)
        "html",  # 200 with an HTML page
        "truncated",  # 200 with JSON cut in half
        "json_array",  # 200 with a JSON array
        "json_null",  # 200 with `null`
        "empty",  # 200 with an empty body
        "huge",  # 200 with a 10 MB body
        "drop",  # close the connection without an answer
        "error_json",  # 200 with {"error": "Invalid API key"}
        "redirect",  # 302 to `body` (a URL)
        # Blips of the play-out, on `info` only (the station answers, its body says so):
        "stopped",  # play-out stopped: no title, playback state "stop" (the quirk, per answer)
        "nothing",  # nothing on air: no title anywhere, not even in `recent`
    }
)
# Faults that shape the station's own answer instead of replacing it: they apply to `info`
# alone (``times=1`` makes a one-poll blip), and the key is still checked.
BLIPS = frozenset({"stopped", "nothing"})


@dataclass
class Fault:
    """One injected fault: ``endpoint`` None means all, ``station`` (its id as the request
    names it) None means every station, ``times`` None means until cleared."""

    kind: str
    endpoint: str | None = None
    times: int | None = None
    status: int = 500
    seconds: float = 30.0
    retry_after: float | None = None
    body: str | None = None
    station: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; known: {sorted(FAULT_KINDS)}")

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Fault:
        allowed = {
            "kind",
            "endpoint",
            "times",
            "status",
            "seconds",
            "retry_after",
            "body",
            "station",
        }
        return cls(**{k: v for k, v in raw.items() if k in allowed})


class FaultPlan:
    """Faults in the order they were added; the first that matches an endpoint is used."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> None:
        self._faults.append(fault)

    def clear(self) -> None:
        self._faults.clear()

    def take(self, endpoint: str, station: str = "") -> Fault | None:
        for fault in self._faults:
            if fault.kind in BLIPS and endpoint != "info":
                continue
            if fault.station not in (None, station):
                continue
            if fault.endpoint in (None, endpoint):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                return fault
        return None

    def __len__(self) -> int:
        return len(self._faults)
