"""The table ``bench.voice`` prints after its runs."""

from __future__ import annotations

from typing import Any


def table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'guilds':>6} {'mode':<9} {'bot':>6} {'ffmpeg':>7} {'total':>6} {'fps min':>8} "
        f"{'fps med':>8} {'audio min':>9} {'<49.5':>6} {'gaps':>5} {'p99 gap':>8} "
        f"{'max gap':>8} {'lag':>6} {'conns':>5} {'shards':>6} {'join s':>7} "
        f"{'RSS bot':>8} {'load':>10}"
    )
    lines = [
        "cores = CPU s per wall s; RSS in MB; conns = upstream stream connections; gaps in ms "
        "(p99 and longest between a guild's frames); lag = the bot's worst event-loop lag, ms; "
        "load = 1-min load average at the start and end of the run",
        head,
    ]
    extra = [
        "per guild-frame = bot+FFmpeg CPU per frame sent to one guild (us); sender ran/waited = "
        "cores the bot's busiest thread ran and waited runnable for a CPU (the machine's load); "
        "fakes = cores of the bench's own process (fake Discord and voice server)",
        f"{'guilds':>6} {'mode':<9} {'per guild-frame':>15} {'ran':>6} {'waited':>7} "
        f"{'sender ran':>10} {'waited':>7} {'threads':>7} {'fakes':>6} {'joins failed':>12}",
    ]
    for r in results:
        gaps = r.get("frame_gaps") or {}
        load = r.get("load_1min") or [0.0, 0.0]
        lines.append(
            f"{r['guilds']:>6} {r['mode']:<9} {r['bot_cores']:>6.3f} {r['ffmpeg_cores']:>7.3f} "
            f"{r['total_cores']:>6.3f} {r['fps']['min']:>8.2f} {r['fps']['median']:>8.2f} "
            f"{r['audio_fps']['min']:>9.2f} {r['guilds_below_49_5']:>6} {r['sequence_gaps']:>5} "
            f"{gaps.get('p99_ms', 0):>8.1f} {gaps.get('max_ms', 0):>8.1f} "
            f"{r.get('loop_worst_lag_ms', 0):>6.1f} {r['upstream_connections']:>5} "
            f"{r.get('shards', 1):>6} {r.get('join_seconds', 0):>7.1f} {r['bot_rss_mb']:>8.1f} "
            f"{load[0]:>4.1f}-{load[1]:<5.1f}"
        )
        threads = r.get("bot_threads") or {}
        sent = r["guilds"] * r["fps"]["median"]
        cost = r["total_cores"] / sent * 1e6 if sent else 0.0
        extra.append(
            f"{r['guilds']:>6} {r['mode']:<9} {cost:>15.1f} {threads.get('ran_cores', 0):>6.3f} "
            f"{threads.get('waited_cores', 0):>7.3f} {threads.get('busiest_thread_ran', 0):>10.3f} "
            f"{threads.get('busiest_thread_waited', 0):>7.3f} {threads.get('threads', 0):>7} "
            f"{r.get('this_process_cores', 0):>6.3f} {r.get('joins_failed', 0):>12}"
        )
    return "\n".join(lines + extra)
