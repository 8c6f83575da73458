"""Rate limits and scripted faults: Discord's global and per-channel limits with its bucket
headers, the 429s a test scripts (``throttle``), and the errors it injects (``fail``).
"""

from __future__ import annotations

import re
import time

from aiohttp import web

from .objects import Recorded
from .state import FakeDiscordState
from .wire import INTERACTION_ROUTE, json_response, too_many


class Limits(FakeDiscordState):
    """Answers a request with a 429 or an injected error before its route does."""

    def _limited(self, record: Recorded) -> web.Response | None:
        scripted = self._throttled(record)
        if scripted is not None or not self.rate_limits:
            return scripted
        if INTERACTION_ROUTE.match(record.route):
            return None  # interaction endpoints are not bound to the global rate limit
        now = time.monotonic()
        window = self._global_window
        while window and now - window[0] >= 1.0:
            window.popleft()
        if len(window) >= self.global_limit:
            return too_many(max(0.01, 1.0 - (now - window[0])), is_global=True)
        window.append(now)
        match = re.match(r"^/channels/(\d+)/messages$", record.route)
        if match and record.method == "POST":
            channel = int(match.group(1))
            limit, period = self.channel_limit
            slots = self._channel_windows[channel]
            while slots and now - slots[0] >= period:
                slots.popleft()
            if len(slots) >= limit:
                retry = max(0.01, period - (now - slots[0]))
                return too_many(retry, is_global=False, bucket=f"msg-{channel}", limit=limit)
            slots.append(now)
        return None

    def _throttled(self, record: Recorded) -> web.Response | None:
        """A scripted 429 (see `throttle`): counted, so a test never depends on timing."""
        for throttle in self.throttles:
            if throttle.method == record.method and throttle.pattern.search(record.route):
                throttle.times -= 1
                if throttle.times <= 0:
                    self.throttles.remove(throttle)
                bucket = None if throttle.is_global else "scripted"
                return too_many(throttle.retry_after, is_global=throttle.is_global, bucket=bucket)
        return None

    def _bucket_headers(self, record: Recorded) -> dict[str, str]:
        match = re.match(r"^/channels/(\d+)/messages$", record.route)
        if not (self.rate_limits and match and record.method == "POST"):
            return {}
        channel = int(match.group(1))
        limit, period = self.channel_limit
        slots = self._channel_windows[channel]
        remaining = max(0, limit - len(slots))
        reset_after = period - (time.monotonic() - slots[0]) if slots else period
        return {
            "X-RateLimit-Bucket": f"msg-{channel}",
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset-After": f"{max(0.0, reset_after):.3f}",
        }

    def _injected(self, record: Recorded) -> web.Response | None:
        for failure in self.failures:
            if failure.method == record.method and failure.pattern.search(record.route):
                if failure.times is not None:
                    failure.times -= 1
                    if failure.times <= 0:
                        self.failures.remove(failure)
                body = {"message": failure.message or "error", "code": failure.code}
                return json_response(body, failure.status)
        return None
