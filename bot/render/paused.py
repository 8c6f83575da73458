"""Why a channel's announcements are paused, in the admin's language (``/onair status``).

The reason is stored in English when the channel is paused (rows written by every earlier
version hold the same English), so it is translated where it is shown: an exact reason is its
own msgid; the two reasons that carry a number are read back by a bounded pattern. A reason
OnAir does not know (an older wording) is shown as stored.
"""

from __future__ import annotations

import re

from ..util.i18n import N_, Lang

# The reasons with a value (bot.delivery.announcements.gone / refused), as stored.
_EXAMPLE_ID = N_("channel {id} is config.example.toml's example id: put your own in config.toml")
_REFUSED = N_("Discord refused the message ({status}, code {code})")
_PATTERNS = (
    (
        re.compile(
            r"channel (?P<id>\d{1,20}) is config\.example\.toml's example id: "
            r"put your own in config\.toml"
        ),
        _EXAMPLE_ID,
    ),
    (
        re.compile(r"Discord refused the message \((?P<status>\d{3}), code (?P<code>\d{1,10})\)"),
        _REFUSED,
    ),
)
_LONGEST = 200  # longer than any reason OnAir writes: anything longer is shown as stored


def paused_reason(reason: str, lang: Lang) -> str:
    """``reason`` (as stored) said in ``lang``; unknown reasons unchanged."""
    if len(reason) > _LONGEST:
        return reason
    for pattern, msgid in _PATTERNS:
        found = pattern.fullmatch(reason)
        if found is not None:
            return lang.t(msgid, **found.groupdict())
    return lang.t(reason)
