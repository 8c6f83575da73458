"""Remove API keys from anything that might be logged or shown."""

from __future__ import annotations

import re

_KEY_PARAM = re.compile(r"(?i)([?&;](?:key|api_key|apikey|token)=)[^&#\s'\"]*")
REDACTED = "***"


def redact_url(text: str) -> str:
    """Replace the value of every `key=`-like query parameter in ``text`` with ``***``."""
    return _KEY_PARAM.sub(lambda m: m.group(1) + REDACTED, text)


def redact(text: str, *secrets: str | None) -> str:
    """Redact key query parameters and every literal occurrence of the given secrets."""
    out = redact_url(text)
    for secret in secrets:
        if secret:
            out = out.replace(secret, REDACTED)
    return out
