"""Whether a thread is on a CPU or queued for one (Linux ``/proc/self/task/<tid>/stat``).

The sender's watchdog asks it before it sets a guild aside: a send that has not returned because
its thread is runnable (state R: preempted on a busy machine, or computing) is not stuck on that
guild's connection, and a new sender thread would only queue for the same CPUs. A thread asleep
(S, D: a blocking call, a lock) is. Elsewhere than Linux the answer is always False, which keeps
the watchdog's first behaviour: every unfinished send is a stall."""

from __future__ import annotations

import os


def runnable(native_id: int) -> bool:
    """True when Linux lists the thread (``threading.get_native_id()``) in state R."""
    try:
        fd = os.open(f"/proc/self/task/{native_id}/stat", os.O_RDONLY)
    except OSError:
        return False
    try:
        stat = os.read(fd, 512)
    except OSError:
        return False
    finally:
        os.close(fd)
    end = stat.rfind(b")")
    return end > 0 and stat[end + 2 : end + 3] == b"R"
