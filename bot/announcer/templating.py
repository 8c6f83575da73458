"""What ``/onair template`` does, without Discord: find the channel's subscription, change its
templates (checked as the config file's are), and find the play a preview shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .. import errors
from ..errors import BadInput
from ..storage import Storage, Subscription
from ..templates.formatter import TemplateError
from ..templates.model import PartName, TemplateSet, Variant
from . import snapshot
from .watcher import Announcement


async def subscription_for(
    storage: Storage, guild_id: int, channel_id: int, station: str, *, channel: str, name: str
) -> Subscription:
    """The guild's announcements of ``station`` in the channel; BadInput when there are none."""
    for sub in await storage.subscriptions(station, guild_id=guild_id):
        if sub.channel_id == channel_id:
            return sub
    raise BadInput(errors.NO_TEMPLATE_TARGET, channel=channel, station=name)


async def set_parts(
    storage: Storage, sub: Subscription, variant: Variant, parts: Mapping[PartName, str]
) -> Subscription:
    """Set the given parts of one variant ("" clears a part); BadInput naming the problem."""
    if not parts:
        raise BadInput(errors.TEMPLATE_NOTHING_GIVEN)
    templates = sub.templates or TemplateSet()
    try:
        for part, text in parts.items():
            templates = templates.with_part(variant, part, text)
    except TemplateError as error:
        raise BadInput(errors.BAD_TEMPLATE, problem=error.said) from None
    await storage.set_templates(sub.id, templates)
    return replace(sub, templates=templates)


async def clear(
    storage: Storage, sub: Subscription, variant: Variant | None, part: PartName | None
) -> Subscription:
    """Clear one part of a variant, one variant, or every template (back to built-in)."""
    templates = sub.templates or TemplateSet()
    if part is not None:
        templates = templates.with_part(variant or "all", part, "")
    else:
        templates = templates.cleared(variant)
    await storage.set_templates(sub.id, templates)
    return replace(sub, templates=templates)


async def last_play(storage: Storage, station: str, *, live: bool | None) -> Announcement | None:
    """The station's last recorded play (of the variant asked for, when there is one): what a
    preview renders, so it shows real text of real length."""
    fallback: Announcement | None = None
    for _, payload in await storage.recent_announcements(station, count=20):
        try:
            recorded = snapshot.load(payload)
        except ValueError:
            continue
        if live is None or recorded.play.live == live:
            return recorded
        fallback = fallback or recorded
    return fallback
