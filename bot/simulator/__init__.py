"""OnAir's station simulator: the demo, the tests and the benchmarks all talk to it over HTTP."""

from .faults import FAULT_KINDS, Fault
from .library import JINGLES, LIVE_SHOW, LIVE_SHOWS, TRACKS, LibraryItem
from .programme import Airing, Programme, Slot
from .server import ManualClock, StationSimulator
from .station import QUIRKS, SimStation

__all__ = [
    "FAULT_KINDS",
    "JINGLES",
    "LIVE_SHOW",
    "LIVE_SHOWS",
    "QUIRKS",
    "TRACKS",
    "Airing",
    "Fault",
    "LibraryItem",
    "ManualClock",
    "Programme",
    "SimStation",
    "Slot",
    "StationSimulator",
]
