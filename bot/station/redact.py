"""Remove API keys from anything that might be logged or shown.

Order matters: every literal form of a known key (raw, URL-encoded as yarl, ``quote`` and
``quote_plus`` write it, lower-case hex, encoded twice, escaped by repr and JSON) is replaced
first, then the value of every ``key=``-like parameter is masked whole up to the next ``&``,
``#`` or whitespace (quotes and any other character included), so no tail of a key survives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus

from yarl import URL

_KEY_PARAM = re.compile(r"(?i)([?&;](?:key|api_key|apikey|token)=)[^&#\s]*")
REDACTED = "***"
T = TypeVar("T")


def redact_url(text: str) -> str:
    """Replace the value of every `key=`-like query parameter in ``text`` with ``***``."""
    return _KEY_PARAM.sub(lambda m: m.group(1) + REDACTED, text)


@lru_cache(maxsize=64)
def _forms(secret: str) -> tuple[str, ...]:
    """Every way ``secret`` may be written in a URL or message, longest first.

    Never raises: a key that is not valid text (a lone surrogate) has no UTF-8 form, so it is
    percent-encoded from the bytes each surrogate policy makes of it, and a form no encoder
    accepts is simply not one the key can appear in.
    """
    forms = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]}  # as reprs and JSON escape it
    encoded = set(_attempt(_yarl_form, secret))
    raws: list[str | bytes] = [secret]
    for errors in ("surrogatepass", "surrogateescape"):
        raws += _attempt(_encoded, secret, errors)
    for raw in raws:
        encoded.update(_attempt(_quoted, raw))
    for form in encoded:
        forms |= {form, form.lower(), quote(form, safe=""), quote(form, safe="").lower()}
    return tuple(sorted((f for f in forms if f), key=len, reverse=True))


def _yarl_form(secret: str) -> tuple[str]:
    secret.encode()  # yarl drops what UTF-8 cannot hold, and a fragment of a key is no form of it
    return (URL("http://x/").with_query({"k": secret}).raw_query_string.removeprefix("k="),)


def _encoded(secret: str, errors: str) -> tuple[bytes]:
    """The key's UTF-8 bytes, lone surrogates passed through or escaped as ``errors`` says."""
    return (secret.encode("utf-8", errors),)


def _quoted(raw: str | bytes) -> tuple[str, ...]:
    return quote(raw, safe=""), quote_plus(raw, safe=""), quote(raw)


def _attempt(make: Callable[..., tuple[T, ...]], *args: Any) -> tuple[T, ...]:
    """``make(*args)``, or nothing when the key cannot be written that way."""
    try:
        return make(*args)
    except (UnicodeError, ValueError):
        return ()


def redact(text: str, *secrets: str | None) -> str:
    """Redact every literal form of the given secrets, then key query parameters."""
    out = text
    for secret in secrets:
        if secret:
            for form in _forms(secret):
                out = out.replace(form, REDACTED)
    return redact_url(out)
