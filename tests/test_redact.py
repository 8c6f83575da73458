"""Redaction of keys with awkward characters: literal forms first, then ``key=`` values whole."""

from __future__ import annotations

import logging
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st
from yarl import URL

from bot.runtime.logs import RedactingFilter
from bot.station.redact import redact, redact_url

# Each key has a distinctive head and tail around the awkward character: neither may survive.
AWKWARD = ["'", '"', "&", "%", " ", "é-ключ", "+", "#", ";", "%26", "\\"]
KEYS = [f"HEADX{c}TAILX" for c in AWKWARD]


def _contexts(key: str) -> list[str]:
    yarl_url = str(URL("https://c5.radioboss.fm/api/info/1").with_query({"key": key}))
    return [
        f"GET {yarl_url} failed: timeout",
        f"GET https://h/api/info/1?station=1&key={key}&x=1",
        f"GET https://h/api/info/1?key={quote(key, safe='')}",
        f"GET https://h/api/info/1?key={quote_plus(key)}",
        f"GET https://h/api/info/1?key={quote(key, safe='').lower()}",
        f"redirected to https://h/next?to={quote(yarl_url, safe='')}",
        f"params {{'key': {key!r}}}",
        f'key="{key}" in a message',
        f"key={key}",
    ]


@pytest.mark.parametrize("key", KEYS)
def test_redact_removes_every_form_of_the_key(key: str) -> None:
    for context in _contexts(key):
        out = redact(context, key)
        assert "HEADX" not in out, (context, out)
        assert "TAILX" not in out, (context, out)
        assert "***" in out


@pytest.mark.parametrize("key", KEYS)
def test_log_filter_redacts_awkward_keys(key: str) -> None:
    filt = RedactingFilter([key])
    for context in _contexts(key):
        record = logging.LogRecord("t", logging.INFO, __file__, 1, "%s", (context,), None)
        assert filt.filter(record)
        out = record.getMessage()
        assert "HEADX" not in out, (context, out)
        assert "TAILX" not in out, (context, out)


@pytest.mark.parametrize("char", ["'", '"', "é", "(", ")", "<", ">", "`", "|"])
def test_pattern_alone_covers_quotes_and_any_char_up_to_a_delimiter(char: str) -> None:
    # An unknown key (not in the secrets list) is still masked whole up to & # or whitespace.
    text = f"GET https://h/api/info/1?key=HEADX{char}s-TAILX&x=1 failed"
    out = redact_url(text)
    assert "HEADX" not in out, out
    assert "TAILX" not in out, out
    assert "&x=1 failed" in out


# Keys that are not valid text: a lone surrogate (typed into the modal's JSON as "\ud800", or a
# key_env variable whose bytes are not UTF-8, which Python reads as "\udcXX").
NOT_TEXT = ["abc\ud800", "HEADX\udcffTAILX", "\udc80", "k\ud83d\ude00\udfff"]


@pytest.mark.parametrize("key", NOT_TEXT)
def test_redact_never_raises_for_a_key_that_is_not_text(key: str) -> None:
    for context in (f"GET https://h/api/info/1?key={key}", f"the key {key!r} failed", "nothing"):
        out = redact(context, key)
        assert key not in out
        assert "HEADX" not in out
        assert "TAILX" not in out


# st.text() never draws a surrogate, so strings are joined from characters, surrogates included.
ANY_CHAR = st.one_of(st.characters(), st.characters(categories=["Cs"]))
ANY_TEXT = st.lists(ANY_CHAR).map("".join)


@given(ANY_TEXT.filter(lambda k: k and "*" not in k), ANY_TEXT)
def test_redact_never_raises_and_never_leaves_the_key(key: str, around: str) -> None:
    assert key not in redact(key, key)
    redact(f"GET https://h/?{around}key={key}&{around}", key)  # whatever it holds: no exception
