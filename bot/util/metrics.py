"""Prometheus text metrics and /healthz on a loopback port (hand-written: a few counters and one
histogram do not need a client library)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping

from aiohttp import web

DELAY_BUCKETS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    def __init__(self) -> None:
        self.counters: dict[str, float] = defaultdict(float)
        self.delay_counts = [0] * (len(DELAY_BUCKETS) + 1)
        self.delay_sum = 0.0
        self.gauges: dict[str, Callable[[], float]] = {}
        # name -> (label, read): one gauge line per label value (e.g. per station)
        self.labelled: dict[str, tuple[str, Callable[[], Mapping[str, float]]]] = {}
        self.started = time.time()

    def inc(self, name: str, amount: float = 1.0) -> None:
        self.counters[name] += amount

    def observe_delay(self, seconds: float) -> None:
        self.delay_sum += seconds
        for index, bound in enumerate(DELAY_BUCKETS):
            if seconds <= bound:
                self.delay_counts[index] += 1
                return
        self.delay_counts[-1] += 1

    def render(self) -> str:
        lines = []
        for name, value in sorted(self.counters.items()):
            lines += [f"# TYPE onair_{name} counter", f"onair_{name} {value:g}"]
        for name, read in sorted(self.gauges.items()):
            lines += [f"# TYPE onair_{name} gauge", f"onair_{name} {read():g}"]
        for name, (label, read_all) in sorted(self.labelled.items()):
            lines.append(f"# TYPE onair_{name} gauge")
            for key, number in sorted(read_all().items()):
                escaped = key.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
                lines.append(f'onair_{name}{{{label}="{escaped}"}} {number:g}')
        lines.append("# TYPE onair_announcement_delay_seconds histogram")
        cumulative = 0
        for bound, count in zip(DELAY_BUCKETS, self.delay_counts, strict=False):
            cumulative += count
            lines.append(f'onair_announcement_delay_seconds_bucket{{le="{bound:g}"}} {cumulative}')
        cumulative += self.delay_counts[-1]
        lines.append(f'onair_announcement_delay_seconds_bucket{{le="+Inf"}} {cumulative}')
        lines.append(f"onair_announcement_delay_seconds_sum {self.delay_sum:g}")
        lines.append(f"onair_announcement_delay_seconds_count {cumulative}")
        return "\n".join(lines) + "\n"


class MetricsServer:
    def __init__(self, metrics: Metrics, healthy: Callable[[], bool]) -> None:
        self.metrics = metrics
        self.healthy = healthy
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._health)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.port = _bound_port(self._runner, port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(text=self.metrics.render(), content_type="text/plain")

    async def _health(self, request: web.Request) -> web.Response:
        ok = self.healthy()
        return web.json_response({"ok": ok}, status=200 if ok else 503)


def _bound_port(runner: web.AppRunner, asked: int) -> int:
    """The port the server listens on (the OS picks one when asked for 0)."""
    addresses = runner.addresses
    return int(addresses[0][1]) if addresses else asked
