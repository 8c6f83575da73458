"""A subscription's announcement wording: templates per part and variant, checked when set.

Imports nothing of Discord or storage: the config file (``bot.config``), storage rows and the
``/onair template`` commands all build a :class:`TemplateSet` through :func:`checked`, so a
template is refused the same way wherever it comes from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, Literal

from .. import errors
from .formatter import MAX_TEMPLATE, Part, TemplateError, drop_surrogates, parse

PartName = Literal["content", "title", "description", "footer", "color"]
TEXT_PARTS: tuple[PartName, ...] = ("content", "title", "description", "footer")
PARTS: tuple[PartName, ...] = (*TEXT_PARTS, "color")
Variant = Literal["all", "live", "autodj"]
VARIANTS: tuple[Variant, ...] = ("all", "live", "autodj")
# The longest source text of each part (the rendered part is clipped to Discord's limit again).
SOURCE_LIMITS: dict[str, int] = {
    "content": 2000,
    "title": 256,
    "description": MAX_TEMPLATE,
    "footer": 1024,
    "color": 7,
}
_COLOR = re.compile(r"#?([0-9a-fA-F]{6})")


@dataclass(frozen=True, slots=True)
class Wording:
    """One variant's templates ("" = not set: the built-in layout's part, or the "all" one)."""

    content: str = ""
    title: str = ""
    description: str = ""
    footer: str = ""
    color: str = ""  # "#rrggbb"

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in PARTS)

    def colour_value(self) -> int | None:
        match = _COLOR.fullmatch(self.color) if self.color else None
        return int(match.group(1), 16) if match else None


@dataclass(frozen=True, slots=True)
class TemplateSet:
    """Templates for every play (``all``), and overrides for live shows and AutoDJ plays."""

    all: Wording = Wording()
    live: Wording = Wording()
    autodj: Wording = Wording()

    def is_empty(self) -> bool:
        return all(getattr(self, v).is_empty() for v in VARIANTS)

    def for_play(self, live: bool) -> Wording:
        """The wording of a play: its variant's parts, each falling back to ``all``'s."""
        variant: Wording = self.live if live else self.autodj
        return Wording(**{p: getattr(variant, p) or getattr(self.all, p) for p in PARTS})

    def with_part(self, variant: Variant, part: PartName, text: str) -> TemplateSet:
        """A copy with one part set ("" clears it); TemplateError when the text is refused."""
        checked_text = check_part(part, text)
        wording = replace(getattr(self, variant), **{part: checked_text})
        return replace(self, **{variant: wording})

    def cleared(self, variant: Variant | None = None) -> TemplateSet:
        if variant is None:
            return TemplateSet()
        return replace(self, **{variant: Wording()})

    def to_json(self) -> str:
        data = {
            v: {p: getattr(getattr(self, v), p) for p in PARTS if getattr(getattr(self, v), p)}
            for v in VARIANTS
        }
        return json.dumps({v: d for v, d in data.items() if d}, separators=(",", ":"))


def check_part(part: str, text: str) -> str:
    """The text of one part when OnAir accepts it; TemplateError naming the problem."""
    if part not in PARTS:
        raise TemplateError(errors.TEMPLATE_NOT_A_PART, part=part, parts=", ".join(PARTS))
    if not isinstance(text, str):
        raise TemplateError(errors.TEMPLATE_NOT_TEXT, part=part)
    text = drop_surrogates(text)
    if len(text) > SOURCE_LIMITS[part]:
        raise TemplateError(
            errors.TEMPLATE_PART_TOO_LONG,
            part=part,
            length=errors.Number(len(text)),
            limit=errors.Number(SOURCE_LIMITS[part]),
        )
    if part == "color":
        text = text.strip()
        if text and not _COLOR.fullmatch(text):
            raise TemplateError(errors.TEMPLATE_BAD_COLOUR, text=text.replace("`", "ˋ")[:20])
        return ("#" + text.lstrip("#").lower()) if text else ""
    try:
        parse(text)
    except TemplateError as error:
        raise TemplateError(errors.TEMPLATE_IN_PART, part=part, problem=error.said) from None
    return text


@lru_cache(maxsize=1024)
def parsed(text: str) -> tuple[Part, ...]:
    """Parsed once per distinct template text (checked when it was set); bounded, since admins
    can set and preview as many texts as they like."""
    return parse(text)


def checked(raw: Any) -> TemplateSet:
    """A TemplateSet from its JSON-like form (config table or stored JSON): the parts of
    ``all`` at the top or under ``all``, and ``live`` / ``autodj`` tables; TemplateError (a
    ValueError) naming the first problem."""
    if raw is None or raw == "":
        return TemplateSet()
    if not isinstance(raw, dict):
        raise TemplateError.plain(
            "expected a table of templates (content, title, ..., live, autodj)"
        )
    known = {*PARTS, *VARIANTS}
    for key in raw:
        if key not in known:
            raise TemplateError.plain(
                f"unknown key '{key}'; use {', '.join(PARTS)}, or the tables live and autodj"
            )
    result = TemplateSet()
    top = {k: v for k, v in raw.items() if k in PARTS}
    for variant in VARIANTS:
        table = raw.get(variant, {}) if variant != "all" else {**raw.get("all", {}), **top}
        if not isinstance(table, dict):
            raise TemplateError.plain(f"'{variant}' must be a table of templates")
        for key, text in table.items():
            if key not in PARTS:
                raise TemplateError.plain(
                    f"unknown key '{variant}.{key}'; use one of " + ", ".join(PARTS)
                )
            if not isinstance(text, str):
                raise TemplateError.plain(f"'{variant}.{key}' must be a string")
            result = result.with_part(variant, key, text)
    return result


def from_json(raw: str | None) -> TemplateSet | None:
    """A stored set (None for a NULL column); a stored set OnAir no longer accepts is dropped
    rather than breaking the channel's announcements."""
    if raw is None:
        return None
    try:
        return checked(json.loads(raw))
    except (ValueError, TypeError):
        return TemplateSet()


assert {f.name for f in fields(Wording)} == set(PARTS)
