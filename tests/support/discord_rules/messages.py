"""A message body (create, edit, webhook, callback data): content, embeds, allowed mentions,
flags and attachments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .components import check_components
from .constants import (
    AUTHOR_NAME_MAX,
    CONTENT_MAX,
    EMBED_DESCRIPTION_MAX,
    EMBED_FIELDS_MAX,
    EMBED_TITLE_MAX,
    EMBED_TOTAL_MAX,
    EMBEDS_MAX,
    FIELD_NAME_MAX,
    FIELD_VALUE_MAX,
    FOOTER_TEXT_MAX,
    IS_COMPONENTS_V2,
    MENTION_IDS_MAX,
    MENTION_PARSE,
)
from .errors import FormErrors, Path
from .fields import (
    _array,
    _integer,
    _object,
    _objects,
    _required_text,
    _snowflake,
    _text,
    _url,
)


def check_message(
    body: Any, errors: FormErrors, *, uploads: Iterable[str] = (), path: Path = ()
) -> None:
    """A message body (create, edit, webhook, callback data): every field that is present."""
    if not isinstance(body, dict):
        errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    names = set(uploads)
    for index, attachment in enumerate(
        _array(errors, (*path, "attachments"), body.get("attachments"), 10)
    ):
        if isinstance(attachment, dict) and attachment.get("filename"):
            names.add(str(attachment["filename"]))
        elif not isinstance(attachment, dict) or "id" not in attachment:
            errors.add(
                (*path, "attachments", index, "id"), "BASE_TYPE_REQUIRED", "This field is required"
            )
    uploaded = frozenset(names)
    _text(errors, (*path, "content"), body.get("content"), CONTENT_MAX)
    embeds = _array(errors, (*path, "embeds"), body.get("embeds"), EMBEDS_MAX)
    for index, embed in enumerate(embeds):
        check_embed(embed, errors, (*path, "embeds", index), uploaded)
    flags = body.get("flags")
    if not (isinstance(flags, int) and flags & IS_COMPONENTS_V2):  # v2 layouts: not modelled
        check_components(body.get("components"), errors, (*path, "components"))
    if body.get("allowed_mentions") is not None:
        check_allowed_mentions(body["allowed_mentions"], errors, (*path, "allowed_mentions"))
    _integer(errors, (*path, "flags"), body.get("flags"), 0, (1 << 31) - 1)


def is_empty(body: Mapping[str, Any], uploads: Iterable[str] = ()) -> bool:
    """Discord refuses a message with no content, embed, file, sticker, poll or component."""
    content = body.get("content")
    return not (
        (isinstance(content, str) and content.strip())
        or body.get("embeds")
        or list(uploads)
        or body.get("attachments")
        or body.get("sticker_ids")
        or body.get("poll")
        or body.get("components")
    )


def check_embed(embed: Any, errors: FormErrors, path: Path, uploads: frozenset[str]) -> None:
    embed = _object(errors, path, embed)
    if embed is None:
        return
    total = _text(errors, (*path, "title"), embed.get("title"), EMBED_TITLE_MAX)
    total += _text(errors, (*path, "description"), embed.get("description"), EMBED_DESCRIPTION_MAX)
    _url(errors, (*path, "url"), embed.get("url"), attachments=None)
    _integer(errors, (*path, "color"), embed.get("color"), 0, 0xFFFFFF)
    for part in ("image", "thumbnail"):
        media = _object(errors, (*path, part), embed.get(part))
        if media is not None:
            _url(errors, (*path, part, "url"), media.get("url"), attachments=uploads)
    footer = _object(errors, (*path, "footer"), embed.get("footer"))
    if footer is not None:
        total += _text(
            errors, (*path, "footer", "text"), footer.get("text"), FOOTER_TEXT_MAX, required=True
        )
        _url(errors, (*path, "footer", "icon_url"), footer.get("icon_url"), attachments=uploads)
    author = _object(errors, (*path, "author"), embed.get("author"))
    if author is not None:
        total += _text(
            errors, (*path, "author", "name"), author.get("name"), AUTHOR_NAME_MAX, required=True
        )
        _url(errors, (*path, "author", "url"), author.get("url"), attachments=None)
        _url(errors, (*path, "author", "icon_url"), author.get("icon_url"), attachments=uploads)
    fields = _array(errors, (*path, "fields"), embed.get("fields"), EMBED_FIELDS_MAX)
    for where, item in _objects(errors, (*path, "fields"), fields):
        total += _required_text(errors, where, item, "name", FIELD_NAME_MAX)
        total += _required_text(errors, where, item, "value", FIELD_VALUE_MAX)
    if total > EMBED_TOTAL_MAX:
        errors.add(
            path, "EMBED_SIZE_EXCEEDED", f"Embed size exceeds maximum size of {EMBED_TOTAL_MAX}"
        )


def check_allowed_mentions(value: Any, errors: FormErrors, path: Path) -> None:
    mentions = _object(errors, path, value)
    if mentions is None:
        return
    parse = _array(errors, (*path, "parse"), mentions.get("parse"), len(MENTION_PARSE))
    for index, kind in enumerate(parse):
        if kind not in MENTION_PARSE:
            errors.add(
                (*path, "parse", index),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {sorted(MENTION_PARSE)}.",
            )
    for kind in ("users", "roles"):
        ids = _array(errors, (*path, kind), mentions.get(kind), MENTION_IDS_MAX)
        for index, item in enumerate(ids):
            if not _snowflake(item):
                errors.add(
                    (*path, kind, index), "NUMBER_TYPE_COERCE", f'Value "{item}" is not snowflake.'
                )
        if ids and kind in parse:
            errors.add(
                path,
                "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                f'parse:["{kind}"] and {kind}: [ids...] are mutually exclusive.',
            )
    if "replied_user" in mentions and not isinstance(mentions["replied_user"], bool | None):
        errors.add((*path, "replied_user"), "BASE_TYPE_BOOLEAN", "Must be either true or false.")
