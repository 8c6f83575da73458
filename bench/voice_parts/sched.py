"""Where a run's CPU time went, per thread (Linux ``/proc/<pid>/task/<tid>/schedstat``): the
time each thread ran and the time it was runnable but waited for a CPU. On a shared machine
the second figure says how much of a late frame is the machine's load rather than the bot's
work: a sender thread that waited for a CPU longer than it ran was starved, not slow."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

Snapshot = dict[int, tuple[int, int]]  # thread id -> (ns on a CPU, ns waiting for one)


def snapshot(pid: int) -> Snapshot:
    """Every thread's run and run-queue wait so far (empty where Linux keeps no schedstat)."""
    out: Snapshot = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            ran, waited, _slices = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        out[int(tid)] = (int(ran), int(waited))
    return out


def summary(before: Snapshot, after: Snapshot, wall: float) -> dict[str, Any]:
    """Cores run and cores' worth of waiting for a CPU, of the whole process and of its busiest
    thread (in a sender run: the sender), over ``wall`` seconds."""
    deltas = [
        (ran - before.get(tid, (0, 0))[0], waited - before.get(tid, (0, 0))[1])
        for tid, (ran, waited) in after.items()
    ]
    if not deltas or wall <= 0:
        return {}
    busiest = max(deltas)
    return {
        "threads": len(after),
        "ran_cores": round(sum(d[0] for d in deltas) / 1e9 / wall, 3),
        "waited_cores": round(sum(d[1] for d in deltas) / 1e9 / wall, 3),
        "busiest_thread_ran": round(busiest[0] / 1e9 / wall, 3),
        "busiest_thread_waited": round(busiest[1] / 1e9 / wall, 3),
    }
