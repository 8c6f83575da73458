"""The one embed builder: every embed OnAir sends is made here, within Discord's limits."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import discord

from ..util.links import BUTTON_URL, EMBED_URL, safe_url
from ..util.text import ELLIPSIS, clip

TITLE = 256
DESCRIPTION = 4096
FIELD_NAME = 256
FIELD_VALUE = 1024
FIELDS = 25
FOOTER = 2048
AUTHOR = 256
TOTAL = 6000
BUTTON_LABEL = 80
BUTTONS_PER_ROW = 5
COMPONENTS = 25

BRAND = discord.Colour(0xE0245E)
LIVE = discord.Colour(0xED4245)
STALE = discord.Colour(0x80848E)  # Discord's grey: a card of a station that does not answer


@dataclass(slots=True)
class _Field:
    name: str
    value: str
    inline: bool


class EmbedBuilder:
    """Collects embed parts and builds a :class:`discord.Embed` that never breaks a limit.

    Text handed in must already be made safe (``text.safe``) where it came from a station; the
    builder clips every part and, when the whole would pass 6000 characters, drops fields from
    the end and then shortens the description.
    """

    def __init__(
        self,
        title: str | None = None,
        description: str | None = None,
        *,
        url: str | None = None,
        colour: discord.Colour = BRAND,
    ) -> None:
        self.title = clip(title, TITLE) if title else None
        self.description = clip(description, DESCRIPTION) if description else None
        self.url = safe_url(url, EMBED_URL)
        self.colour = colour
        self.fields: list[_Field] = []
        self.footer_text: str | None = None
        self.footer_icon: str | None = None
        self.author_name: str | None = None
        self.author_icon: str | None = None
        self.author_url: str | None = None
        self.image_url: str | None = None
        self.thumbnail_url: str | None = None
        self.timestamp: datetime | None = None

    def field(self, name: str, value: str | None, *, inline: bool = True) -> EmbedBuilder:
        if len(self.fields) >= FIELDS or not value or not name:
            return self
        self.fields.append(_Field(clip(name, FIELD_NAME), clip(value, FIELD_VALUE), inline))
        return self

    def footer(
        self, text: str | None, icon_url: str | None = None, *, when: datetime | None = None
    ) -> EmbedBuilder:
        """Footer text (plain: no markdown, no ``<t:…>``); ``when`` is drawn after it in each
        reader's own zone ("Today at 10:03")."""
        self.footer_text = clip(text, FOOTER) if text else None
        self.footer_icon = safe_url(icon_url, EMBED_URL, https_only=True)
        self.timestamp = when
        return self

    def author(
        self, name: str | None, *, icon_url: str | None = None, url: str | None = None
    ) -> EmbedBuilder:
        self.author_name = clip(name, AUTHOR) if name else None
        self.author_icon = safe_url(icon_url, EMBED_URL, https_only=True)
        self.author_url = safe_url(url, EMBED_URL)
        return self

    def image(self, url: str | None) -> EmbedBuilder:
        """An https image, or one uploaded with the message (``attachment://name``, OnAir's own
        file names)."""
        if url is not None and url.startswith("attachment://"):
            self.image_url = url
        else:
            self.image_url = safe_url(url, EMBED_URL, https_only=True)
        return self

    def thumbnail(self, url: str | None) -> EmbedBuilder:
        self.thumbnail_url = safe_url(url, EMBED_URL, https_only=True)
        return self

    def _total(self) -> int:
        return sum(
            len(part or "")
            for part in (self.title, self.description, self.footer_text, self.author_name)
        ) + sum(len(f.name) + len(f.value) for f in self.fields)

    def _fit(self) -> None:
        while self._total() > TOTAL and self.fields:
            self.fields.pop()
        excess = self._total() - TOTAL
        if excess > 0 and self.description:
            self.description = clip(self.description, max(1, len(self.description) - excess))
        excess = self._total() - TOTAL
        if excess > 0 and self.footer_text:
            self.footer_text = clip(self.footer_text, max(1, len(self.footer_text) - excess))

    def build(self) -> discord.Embed:
        self._fit()
        embed = discord.Embed(
            title=self.title,
            description=self.description,
            url=self.url,
            colour=self.colour,
            timestamp=self.timestamp,
        )
        for item in self.fields:
            embed.add_field(name=item.name, value=item.value, inline=item.inline)
        if self.footer_text:
            embed.set_footer(text=self.footer_text, icon_url=self.footer_icon)
        if self.author_name:
            embed.set_author(name=self.author_name, url=self.author_url, icon_url=self.author_icon)
        if self.image_url:
            embed.set_image(url=self.image_url)
        if self.thumbnail_url:
            embed.set_thumbnail(url=self.thumbnail_url)
        return embed


def cache_busted(url: str | None, play_key: str) -> str | None:
    """Artwork URLs stay the same between plays; Discord caches by URL, so add the play (to the
    query, before any fragment). None when the artwork is no https URL Discord accepts."""
    base = safe_url(url, EMBED_URL, https_only=True)
    if base is None:
        return None
    address, hash_mark, fragment = base.partition("#")
    token = hashlib.sha1(play_key.encode()).hexdigest()[:10]
    separator = "&" if "?" in address else "?"
    busted = f"{address}{separator}onair={token}{hash_mark}{fragment}"
    return safe_url(busted, EMBED_URL) or base  # at the limit: the artwork, not cache-busted


def link_view(links: list[tuple[str, str | None]]) -> discord.ui.View | None:
    """URL buttons for the links among ``links`` Discord accepts in a button (``safe_url``; the
    others are left out): 5 a row, 25 at most, labels clipped."""
    view = discord.ui.View(timeout=None)
    count = 0
    for label, link in links:
        if count >= COMPONENTS:
            break
        url = safe_url(link, BUTTON_URL)
        if url is None:
            continue
        view.add_item(
            discord.ui.Button(
                label=clip(label, BUTTON_LABEL) or ELLIPSIS,
                url=url,
                style=discord.ButtonStyle.link,
                row=count // BUTTONS_PER_ROW,
            )
        )
        count += 1
    return view if count else None
