"""A sampling look at the bench bot's threads (``ONAIR_BENCH_SAMPLE=1``): every 2 ms, the line
each named thread is on, counted; the report lists the most frequent. Where the time of a
thread goes is then seen in the bot process itself, under its real load (GIL, event loop,
sockets), not in a micro-benchmark."""

from __future__ import annotations

import collections
import sys
import threading
import time


class Sampler:
    """Counts (thread name, file:line of the innermost frame and its caller) every ``every`` s."""

    def __init__(self, names: tuple[str, ...] = ("voice-sender",), every: float = 0.002) -> None:
        self.names = names
        self.every = every
        self.counts: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            wanted = {t.ident: t.name for t in threading.enumerate() if t.name in self.names}
            for ident, frame in sys._current_frames().items():
                name = wanted.get(ident)
                if name is None:
                    continue
                caller = frame.f_back
                where = f"{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_lineno}"
                if caller is not None:
                    where += f" < {caller.f_code.co_filename.rsplit('/', 1)[-1]}:{caller.f_lineno}"
                self.counts[f"{name} {where}"] += 1

    def stop(self, top: int = 15) -> list[tuple[str, int]]:
        self._stop.set()
        self._thread.join(1.0)
        time.sleep(0)
        return self.counts.most_common(top)
