"""/listen's other streams: each tune-in link past the two buttons, in a listener's words."""

from __future__ import annotations

from dataclasses import dataclass

from ..station import Links
from ..util.i18n import ENGLISH, Lang
from ..util.links import BUTTON_URL, safe_url
from ..util.text import clip, plain

__all__ = ["MORE_STREAMS", "StreamChoice", "more_streams"]

MORE_STREAMS = 25  # a select menu's options


@dataclass(frozen=True, slots=True)
class StreamChoice:
    """One option of /listen's "More streams" menu: a key that stays the same between answers
    (the menu's value), plain words for a listener, and the link it gives."""

    value: str
    label: str
    description: str
    url: str


def _first(*links: str | None) -> str | None:
    """The first of ``links`` Discord accepts in a button (a broken https link falls back to
    the plain one)."""
    return next((url for link in links if (url := safe_url(link, BUTTON_URL))), None)


def more_streams(links: Links, lang: Lang = ENGLISH) -> list[StreamChoice]:
    """Every tune-in link other than the Listen and Web player buttons', once, in plain words
    (no "HTTP stream" or "Mount /lofi M3U": a listener wants to know what to do with it)."""
    entries: list[tuple[str, str, str, str | None]] = [
        (
            "stream",
            lang.t("Direct stream"),
            lang.t("The audio itself, for a browser or an app"),
            _first(links.port443, links.ssl),
        ),
        (
            "stream-plain",
            lang.t("Direct stream for older players"),
            lang.t("For players that cannot open secure (https) links"),
            _first(links.port80, links.http),
        ),
        (
            "m3u",
            lang.t("Open in a media player"),
            lang.t("A playlist file for VLC, foobar2000 and others"),
            links.m3u_best,
        ),
        (
            "pls",
            lang.t("Open in Winamp or a similar player"),
            lang.t("A playlist file (.pls)"),
            links.pls,
        ),
    ]
    # The mount the station's own stream links play (often named "/stream") is that stream
    # again: "Stream: stream" told a listener nothing new.
    main = {links.ssl, links.http, links.port443, links.port80} - {None}
    for index, mount in enumerate(links.mounts):
        if (mount.ssl or mount.http) in main:
            continue
        name = plain((mount.name or "").strip("/ "), limit=60) or lang.t(
            "stream {number}", number=index + 1
        )
        entries.append(
            (
                f"mount-{index}",
                lang.t("Stream: {name}", name=name),
                lang.t("Another stream of this station"),
                _first(mount.ssl, mount.http),
            )
        )
        entries.append(
            (
                f"mount-{index}-m3u",
                lang.t("Stream: {name}, in a media player", name=name),
                lang.t("A playlist file for VLC, foobar2000 and others"),
                _first(mount.m3u_ssl, mount.m3u),
            )
        )
    seen = {links.listen, safe_url(links.page, BUTTON_URL)}
    choices: list[StreamChoice] = []
    for value, label, description, link in entries:
        url = safe_url(link, BUTTON_URL)  # given as an "Open" button when chosen
        if url is not None and url not in seen:
            seen.add(url)
            choices.append(StreamChoice(value, clip(label, 100), clip(description, 100), url))
    return choices
