"""What the voice commands answer: /leave and the voice settings (/onair voice), in words.

Said once each: the settings as bullets, the channel status among them with the status text
itself, and a missing permission first (it is what the admin has to act on).
"""

from __future__ import annotations

from .. import errors
from ..util.i18n import ENGLISH, Lang


def spoken_seconds(seconds: float, lang: Lang = ENGLISH) -> str:
    """300 → "5 minutes", 90 → "1 minute 30 seconds", 45 → "45 seconds" (in ``lang``)."""
    total = round(seconds)
    minutes, rest = divmod(total, 60)
    parts = []

    if minutes:
        parts.append(
            lang.tn("{count} minute", "{count} minutes", minutes, count=lang.count(minutes))
        )
    if rest or not minutes:
        parts.append(lang.tn("{count} second", "{count} seconds", rest, count=lang.count(rest)))
    return " ".join(parts)


def left_text(home_channel: int, *, admin: bool, lang: Lang = ENGLISH) -> str:
    """/leave's answer: one sentence. A 24/7 home channel stays set (an admin's setting, not
    the caller's): OnAir says it comes back there; an admin also reads how to clear it."""
    if not home_channel:
        return lang.t("⏹ Stopped and left the voice channel.")
    if admin:
        return lang.t(
            "⏹ Stopped; {channel} is still this server's home channel, so I'll be back "
            "there after my next restart (`/onair voice channel:none` clears it).",
            channel=f"<#{home_channel}>",
        )
    return lang.t(
        "⏹ Stopped; I'll be back in {channel} after my next restart.", channel=f"<#{home_channel}>"
    )


def settings_text(
    *,
    home: str | None,
    leave_when_empty: float,
    station: str | None,
    status_on: bool,
    status_now: str | None = None,
    missing_permission_in: str | None = None,
    lang: Lang = ENGLISH,
) -> str:
    """The guild's voice settings in plain words: the home channel OnAir never leaves, when it
    leaves any other channel nobody listens in (the two never contradict), the station, and
    the channel status (``status_now``: the status OnAir shows now, already escaped).
    ``missing_permission_in``: the channel where OnAir may not set the status, said first.
    Said in ``lang`` (the admin's own client language: the reply is private)."""
    lines = []
    if missing_permission_in is not None:
        lines.append("⚠️ " + lang.t(errors.NO_STATUS_PERMISSION, channel=missing_permission_in))
    lines.append(lang.t("🔊 **Voice settings**"))
    if home is not None:
        lines.append(
            lang.t(
                "• Home channel: {channel}. I stay there around the clock, even when nobody "
                "listens, and come back to it after a restart.",
                channel=home,
            )
        )
    else:
        lines.append(lang.t("• No home channel: I only play where someone runs `/join`."))
    if leave_when_empty > 0:
        after = spoken_seconds(leave_when_empty, lang)
        if home is not None:
            lines.append(
                lang.t(
                    "• I leave any other channel once nobody has listened there for {time}.",
                    time=after,
                )
            )
        else:
            lines.append(
                lang.t("• I leave a channel once nobody has listened there for {time}.", time=after)
            )
    elif home is not None:
        lines.append(lang.t("• I stay in any other channel until someone runs `/leave`."))
    else:
        lines.append(lang.t("• I stay in a channel until someone runs `/leave`."))
    if station is not None:
        lines.append(lang.t("• Station: {station}.", station=station))
    else:
        lines.append(lang.t("• Station: this server's default station."))
    if not status_on:
        lines.append(
            lang.t(
                "• The voice channel's status is left alone (mine is cleared; "
                "`/onair voice status:True` shows what I play there)."
            )
        )
    elif status_now:
        lines.append(
            lang.t(
                "• The voice channel's status shows what I play (a status someone else set "
                "stays); now: {status}",
                status=status_now,
            )
        )
    else:
        lines.append(
            lang.t(
                "• The voice channel's status shows what I play (a status someone else set stays)."
            )
        )
    return "\n".join(lines)
