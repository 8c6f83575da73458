"""The announcement template formatter: OnAir's own, small on purpose.

Python's ``str.format`` on a user's text reaches attributes and items of its arguments (a path
to module globals) and honours format specs (``{title:>50000000}`` builds 50 MB); template
engines bring a sandbox to escape. This one knows exactly one form, ``{name}`` or
``{name|fallback}`` with ``name`` from a fixed list, plus ``{{`` and ``}}`` for literal braces.
Anything else in braces is refused at parse time with a message naming what is wrong. Rendering
is a concatenation: linear in the template and the values, whatever they hold.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import errors
from ..util.i18n import ENGLISH

# The names a template may use, in the order the manual (docs/features/templates.md) and the
# error messages list them.
NAMES: tuple[str, ...] = (
    "artist",
    "title",
    "album",
    "year",
    "genre",
    "station",
    "listeners",
    "listen_url",
    "started",
    "likes",
    "requested_by",
)
MAX_TEMPLATE = 2000  # characters of one template (a field's source text)
MAX_FALLBACK = 100  # characters of a fallback after "|"
MAX_PLACEHOLDERS = 50  # placeholders in one template
_NAME = re.compile(r"[a-z_]{1,20}")


class TemplateError(ValueError):
    """A template OnAir refuses; ``str(error)`` says what is wrong, fit for the admin, and
    ``said`` says it in the admin's language (``msgid`` is always formatted)."""

    def __init__(self, msgid: str, /, **values: object) -> None:
        self.said = errors.Formatted(msgid, **values)
        super().__init__(self.said.said_in(ENGLISH))

    @classmethod
    def plain(cls, text: str) -> TemplateError:
        """A problem in the owner's config.toml, said as is (English; braces not formatted)."""
        return cls("{text}", text=text)


@dataclass(frozen=True, slots=True)
class Placeholder:
    name: str
    fallback: str | None  # None: no "|"; "" is an explicit empty fallback


Part = str | Placeholder


def drop_surrogates(text: str) -> str:
    """Lone surrogates (from JSON ``\\ud800`` escapes) cannot be encoded for Discord."""
    if text.isascii():
        return text
    return "".join(c for c in text if unicodedata.category(c) != "Cs")


def _describe(inner: str) -> TemplateError:
    """Why ``{inner}`` is refused, in the admin's words."""
    shown = (inner if len(inner) <= 40 else inner[:39] + "…").replace("`", "ˋ")
    name = re.split(r"[.\[:!|]", inner, maxsplit=1)[0].strip() or "title"
    name = (name if len(name) <= 40 else name[:39] + "…").replace("`", "ˋ")  # it is shown too
    if ":" in inner:
        return TemplateError(errors.TEMPLATE_FORMAT_SPEC, shown=shown, name=name)
    if "!" in inner:
        return TemplateError(errors.TEMPLATE_CONVERSION, shown=shown, name=name)
    if "." in inner or "[" in inner or "]" in inner:
        return TemplateError(errors.TEMPLATE_REACHES_IN, shown=shown, name=name)
    if not inner.strip():
        return TemplateError(errors.TEMPLATE_EMPTY_NAME)
    names = ", ".join(f"`{{{n}}}`" for n in NAMES)
    return TemplateError(errors.TEMPLATE_UNKNOWN_NAME, shown=shown, names=names)


def parse(source: str) -> tuple[Part, ...]:
    """The template's literal text and placeholders; :class:`TemplateError` when refused."""
    if len(source) > MAX_TEMPLATE:
        raise TemplateError(
            errors.TEMPLATE_TOO_LONG,
            length=errors.Number(len(source)),
            limit=errors.Number(MAX_TEMPLATE),
        )
    source = drop_surrogates(source)
    parts: list[Part] = []
    literal: list[str] = []
    index, end = 0, len(source)
    while index < end:
        char = source[index]
        if char == "{" and not source.startswith("{{", index):
            close = source.find("}", index + 1)
            opening = source.find("{", index + 1)
            if close < 0:
                raise TemplateError(errors.TEMPLATE_UNCLOSED)
            if 0 <= opening < close:
                raise TemplateError(errors.TEMPLATE_NESTED)
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(_placeholder(source[index + 1 : close]))
            if len(parts) > 2 * MAX_PLACEHOLDERS:
                raise TemplateError(errors.TEMPLATE_TOO_MANY, count=MAX_PLACEHOLDERS)
            index = close + 1
        elif char in "{}":
            if not source.startswith(char * 2, index):
                raise TemplateError(errors.TEMPLATE_LONE_CLOSE)
            literal.append(char)
            index += 2
        else:
            literal.append(char)
            index += 1
    if literal:
        parts.append("".join(literal))
    if sum(isinstance(p, Placeholder) for p in parts) > MAX_PLACEHOLDERS:
        raise TemplateError(errors.TEMPLATE_TOO_MANY, count=MAX_PLACEHOLDERS)
    return tuple(parts)


def _placeholder(inner: str) -> Placeholder:
    name, bar, fallback = inner.partition("|")
    if not _NAME.fullmatch(name) or name not in NAMES:
        raise _describe(inner)
    if bar and len(fallback) > MAX_FALLBACK:
        raise TemplateError(
            errors.TEMPLATE_FALLBACK_TOO_LONG, name=name, length=len(fallback), limit=MAX_FALLBACK
        )
    return Placeholder(name, fallback if bar else None)


def names_in(parts: tuple[Part, ...]) -> set[str]:
    return {p.name for p in parts if isinstance(p, Placeholder)}


def render(
    parts: tuple[Part, ...],
    values: Mapping[str, str],
    *,
    cap: int | None = None,
    clip: Callable[[str, int], str] | None = None,
) -> str:
    """The template with each placeholder replaced by its value (already made safe by the
    caller), or its fallback when the value is empty. ``cap`` shortens every value longer than
    it with ``clip`` (the budget's lever: the longest values are cut first)."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value = values.get(part.name, "")
        if not value:
            out.append(part.fallback or "")
            continue
        if cap is not None and len(value) > cap:
            value = clip(value, cap) if clip is not None else value[:cap]
        out.append(value)
    return "".join(out)


def fixed_length(parts: tuple[Part, ...], values: Mapping[str, str]) -> int:
    """Characters of the rendering that no cap shortens (literal text and fallbacks)."""
    total = 0
    for part in parts:
        if isinstance(part, str):
            total += len(part)
        elif not values.get(part.name, ""):
            total += len(part.fallback or "")
    return total
