"""Whether storage is failing now: one WARNING line per outage, one INFO line when it is over.

Every storage operation notes its outcome here (the backends' primitives do it). The first
failure opens an outage; the callers that catch storage errors log through :meth:`warn`, which
lets the first line of an outage out at WARNING and the rest at DEBUG, so a database that is
gone for ten minutes does not log a line per poll. The outage is over at the first success of
an operation that began after it opened: an operation already in flight on a dead connection
when the outage began (a straggler) can neither end it nor open another.
"""

from __future__ import annotations

import logging
import time
from typing import Any

_LOGGER = logging.getLogger("onair.storage")


class StorageHealth:
    """The storage's outage state, shared by every caller of one storage."""

    def __init__(self) -> None:
        self.outages = 0  # outages opened so far: an operation notes the count it began under
        self.failing = False
        self.failures = 0  # failed operations in the current (or last) outage
        self._since = 0.0
        self._warned = False
        self._stragglers = 0  # failures of operations begun before an outage already over
        self._writes_failed = False  # in the current outage

    def begin(self) -> int:
        """Call before an operation; hand the result to :meth:`failed` or :meth:`succeeded`."""
        return self.outages

    def failed(self, began: int, *, write: bool = False) -> None:
        """A storage operation begun under ``began`` failed with a storage error."""
        self.failures += 1
        if self.failing:
            self._writes_failed |= write
            return
        if began != self.outages:  # began before the last outage opened, which is over
            self._stragglers += 1
            return
        self.outages += 1
        self.failing = True
        self.failures = 1
        self._writes_failed = write
        self._since = time.monotonic()
        self._warned = False
        self._stragglers = 0

    def succeeded(self, began: int, *, write: bool = False) -> None:
        """A storage operation begun under ``began`` succeeded. Once a write failed, only a
        write ends the outage: a locked or read-only database still answers reads."""
        if not self.failing or began != self.outages or (self._writes_failed and not write):
            return
        self.failing = False
        _LOGGER.info(
            "storage works again after %.1fs (%d operation(s) failed meanwhile)",
            time.monotonic() - self._since,
            self.failures,
        )

    def warn(self, logger: logging.Logger, message: str, *args: Any) -> None:
        """Log a caught storage error: at WARNING for the first of an outage, else at DEBUG.
        An error the operations never noted (none is open, and it was no straggler) is logged
        at WARNING: better a line too many than a failure nobody sees."""
        if self.failing and not self._warned:
            self._warned = True
            logger.warning(
                message + " (more storage failures are logged at DEBUG until it works again)",
                *args,
            )
        elif self.failing:
            logger.debug(message, *args)
        elif self._stragglers:
            self._stragglers -= 1
            logger.debug(message, *args)
        else:
            logger.warning(message, *args)
