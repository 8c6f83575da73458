"""Remove API keys from anything that might be logged or shown.

Order matters: every literal form of a known key (raw, URL-encoded as yarl, ``quote`` and
``quote_plus`` write it, lower-case hex, encoded twice, escaped by repr and JSON) is replaced
first, then the value of every ``key=``-like parameter is masked whole up to the next ``&``,
``#`` or whitespace (quotes and any other character included), so no tail of a key survives.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from urllib.parse import quote, quote_plus

from yarl import URL

_KEY_PARAM = re.compile(r"(?i)([?&;](?:key|api_key|apikey|token)=)[^&#\s]*")
REDACTED = "***"


def redact_url(text: str) -> str:
    """Replace the value of every `key=`-like query parameter in ``text`` with ``***``."""
    return _KEY_PARAM.sub(lambda m: m.group(1) + REDACTED, text)


@lru_cache(maxsize=64)
def _forms(secret: str) -> tuple[str, ...]:
    """Every way ``secret`` may be written in a URL or message, longest first."""
    yarl_form = URL("http://x/").with_query({"k": secret}).raw_query_string.removeprefix("k=")
    encoded = {yarl_form, quote(secret, safe=""), quote_plus(secret, safe=""), quote(secret)}
    forms = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]}  # as reprs and JSON escape it
    for form in encoded:
        forms |= {form, form.lower(), quote(form, safe=""), quote(form, safe="").lower()}
    return tuple(sorted((f for f in forms if f), key=len, reverse=True))


def redact(text: str, *secrets: str | None) -> str:
    """Redact every literal form of the given secrets, then key query parameters."""
    out = text
    for secret in secrets:
        if secret:
            for form in _forms(secret):
                out = out.replace(form, REDACTED)
    return redact_url(out)
