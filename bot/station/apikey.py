"""Whether a station API key can be used at all, checked where a key enters (the station-add
modal, a config file's ``key_env``), so a key no request can carry is refused with one clear line
instead of failing later, deep in a request and its error path."""

from __future__ import annotations

import unicodedata

from ..util.i18n import N_

# Lone surrogates (a modal's JSON "\ud800", or a variable whose bytes are not UTF-8, which Python
# reads as "\udcXX"), control characters and invisible format characters (a zero-width space
# pasted with the key): none belongs in a key, and a surrogate cannot be sent at all.
_UNFIT = {"Cs": N_("is not valid text"), "Cc": N_("holds a control character")}
_INVISIBLE = N_("holds an invisible character (pasted with it?)")


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be an API key (a phrase to follow "The key ..."), or None if it can."""
    for char in key:
        category = unicodedata.category(char)
        if category in _UNFIT:
            return _UNFIT[category]
        if category == "Cf":
            return _INVISIBLE
    return None
