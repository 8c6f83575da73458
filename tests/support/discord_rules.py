"""Discord's documented request shapes and limits, checked by the fake Discord on every request.

Written from Discord's developer documentation (messages, embeds, components, interactions,
application commands) and checked against the limits in Discord's published OpenAPI description.
A violation is answered the way Discord answers it: HTTP 400 with code 50035 "Invalid Form Body"
and the errors nested by field path (``{"embeds": {"0": {"title": {"_errors": [...]}}}}``), or
one of the plain JSON errors below (empty message, interaction already acknowledged). discord.py
turns both into ``discord.HTTPException``, so the bot's own error paths run in tests.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .discord_uri import uri_scheme

# Error codes (JSON "code") ---------------------------------------------------------------
INVALID_FORM_BODY = 50035
EMPTY_MESSAGE = 50006
ALREADY_ACKNOWLEDGED = 40060
UNKNOWN_INTERACTION = 10062
UNKNOWN_WEBHOOK = 10015
NOT_AUTHOR = 50005
ENTITY_TOO_LARGE = 40005

# Interaction types (what Discord sends) ----------------------------------------------------
PING = 1
APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
AUTOCOMPLETE = 4
MODAL_SUBMIT = 5

# Interaction callback types (what the bot answers) ----------------------------------------
PONG = 1
CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
AUTOCOMPLETE_RESULT = 8
MODAL = 9
LAUNCH_ACTIVITY = 12

ALLOWED_CALLBACKS: dict[int, frozenset[int]] = {
    PING: frozenset({PONG}),
    APPLICATION_COMMAND: frozenset(
        {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, MODAL, LAUNCH_ACTIVITY}
    ),
    MESSAGE_COMPONENT: frozenset(
        {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE, MODAL}
    ),
    AUTOCOMPLETE: frozenset({AUTOCOMPLETE_RESULT}),
    MODAL_SUBMIT: frozenset(
        {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE}
    ),
}

# Component types and button styles --------------------------------------------------------
ACTION_ROW = 1
BUTTON = 2
STRING_SELECT = 3
TEXT_INPUT = 4
SELECT_MENUS = frozenset({3, 5, 6, 7, 8})  # string, user, role, mentionable, channel
BUTTON_STYLES = frozenset({1, 2, 3, 4, 5, 6})
LINK_STYLE = 5
PREMIUM_STYLE = 6
TEXT_INPUT_STYLES = frozenset({1, 2})

# Message flags a bot may set -----------------------------------------------------------------
SUPPRESS_EMBEDS = 1 << 2
EPHEMERAL = 1 << 6
SUPPRESS_NOTIFICATIONS = 1 << 12
IS_COMPONENTS_V2 = 1 << 15

# Application command types and option types -------------------------------------------------
CHAT_INPUT = 1
USER_COMMAND = 2
MESSAGE_COMMAND = 3
SUB_COMMAND = 1
SUB_COMMAND_GROUP = 2
STRING_OPTION = 3
OPTION_TYPES = frozenset(range(1, 12))

# Limits --------------------------------------------------------------------------------------
CONTENT_MAX = 2000
UPLOAD_MAX = 10 * 1024 * 1024  # bytes of files in one request (a server without boosts)
EMBEDS_MAX = 10
EMBED_TOTAL_MAX = 6000
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELDS_MAX = 25
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_TEXT_MAX = 2048
AUTHOR_NAME_MAX = 256
URL_MAX = 2048
ACTION_ROWS_MAX = 5
ROW_WIDTH_MAX = 5
BUTTON_LABEL_MAX = 80
BUTTON_URL_MAX = 512
BUTTON_SCHEMES = ("http", "https", "discord")
CUSTOM_ID_MAX = 100
SELECT_OPTIONS_MAX = 25
SELECT_OPTION_TEXT_MAX = 100
SELECT_PLACEHOLDER_MAX = 150
SELECT_VALUES_MAX = 25
MODAL_TITLE_MAX = 45
MODAL_ROWS_MAX = 5
TEXT_INPUT_LABEL_MAX = 45
TEXT_INPUT_PLACEHOLDER_MAX = 100
TEXT_INPUT_VALUE_MAX = 4000
CHOICES_MAX = 25
CHOICE_NAME_MAX = 100
CHOICE_STRING_VALUE_MAX = 100
COMMAND_NAME_MAX = 32
COMMAND_DESCRIPTION_MAX = 100
COMMAND_OPTIONS_MAX = 25
COMMAND_TOTAL_MAX = 4000
STRING_OPTION_LENGTH_MAX = 6000
CHAT_INPUT_COMMANDS_MAX = 100
CONTEXT_COMMANDS_MAX = 15  # each of user and message commands
MENTION_IDS_MAX = 100
# Discord's locales (AvailableLocalesEnum in its OpenAPI description): the only keys a
# name_localizations or description_localizations object may hold, 34 at most.
LOCALES = frozenset(
    {
        *("ar", "bg", "cs", "da", "de", "el", "en-GB", "en-US", "es-419", "es-ES", "fi", "fr"),
        *("he", "hi", "hr", "hu", "id", "it", "ja", "ko", "lt", "nl", "no", "pl", "pt-BR"),
        *("ro", "ru", "sv-SE", "th", "tr", "uk", "vi", "zh-CN", "zh-TW"),
    }
)
MENTION_PARSE = frozenset({"roles", "users", "everyone"})
NAME_PUNCTUATION = frozenset("-_'")
DEVANAGARI = ((0x0900, 0x097F), (0xA8E0, 0xA8FF), (0x11B00, 0x11B5F))
THAI = ((0x0E00, 0x0E7F),)

Path = tuple[str | int, ...]


@dataclass
class FormErrors:
    """Collects violations and renders Discord's nested ``errors`` object."""

    tree: dict[str, Any] = field(default_factory=dict)

    def add(self, path: Path, code: str, message: str) -> None:
        node = self.tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def __bool__(self) -> bool:
        return bool(self.tree)

    def body(self) -> dict[str, Any]:
        return {"code": INVALID_FORM_BODY, "message": "Invalid Form Body", "errors": self.tree}


@dataclass(frozen=True)
class Rejection:
    """What the fake answers instead of performing the request."""

    status: int
    body: dict[str, Any]

    @classmethod
    def error(cls, status: int, code: int, message: str) -> Rejection:
        """Discord's JSON error body: its numeric ``code`` and the ``message`` it says."""
        return cls(status, {"code": code, "message": message})


def empty_message() -> Rejection:
    return Rejection.error(400, EMPTY_MESSAGE, "Cannot send an empty message")


def already_acknowledged() -> Rejection:
    return Rejection.error(400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged.")


def unknown_interaction() -> Rejection:
    return Rejection.error(404, UNKNOWN_INTERACTION, "Unknown interaction")


def unknown_webhook() -> Rejection:
    """A follow-up (webhook) before the interaction was answered: its webhook does not exist."""
    return Rejection.error(404, UNKNOWN_WEBHOOK, "Unknown Webhook")


def not_author() -> Rejection:
    return Rejection.error(403, NOT_AUTHOR, "Cannot edit a message authored by another user")


def too_large() -> Rejection:
    return Rejection.error(413, ENTITY_TOO_LARGE, "Request entity too large")


def rejection(errors: FormErrors) -> Rejection | None:
    return Rejection(400, errors.body()) if errors else None


# Primitive checks ------------------------------------------------------------------------------


def _text(
    errors: FormErrors,
    path: Path,
    value: Any,
    maximum: int,
    *,
    minimum: int = 0,
    required: bool = False,
) -> int:
    """Check a string field's type and length; returns its length (0 when absent)."""
    if value is None:
        if required:
            errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return 0
    if not isinstance(value, str):
        errors.add(path, "BASE_TYPE_STRING", "Must be a string.")
        return 0
    length = len(value)
    if length > maximum:
        errors.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {maximum} or fewer in length.")
    elif length < minimum:
        errors.add(path, "BASE_TYPE_MIN_LENGTH", f"Must be {minimum} or more in length.")
    return length


def _array(errors: FormErrors, path: Path, value: Any, maximum: int, minimum: int = 0) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(path, "BASE_TYPE_ARRAY", "Must be an array.")
        return []
    if len(value) > maximum:
        errors.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {maximum} or fewer in length.")
    elif len(value) < minimum:
        errors.add(path, "BASE_TYPE_MIN_LENGTH", f"Must be {minimum} or more in length.")
    return value


def _object(errors: FormErrors, path: Path, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return None
    return value


def _integer(errors: FormErrors, path: Path, value: Any, minimum: int, maximum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        errors.add(path, "NUMBER_TYPE_COERCE", f'Value "{value}" is not int.')
        return None
    if not minimum <= value <= maximum:
        errors.add(
            path,
            "NUMBER_TYPE_MAX" if value > maximum else "NUMBER_TYPE_MIN",
            f"int value should be between {minimum} and {maximum}.",
        )
    return value


def _url(
    errors: FormErrors,
    path: Path,
    value: Any,
    *,
    attachments: frozenset[str] | None,
    maximum: int = URL_MAX,
    schemes: tuple[str, ...] = ("http", "https"),
) -> None:
    """A ``format: uri`` field: a well-formed absolute URI (RFC 3986, ``discord_uri``) of at
    most ``maximum`` characters whose scheme is one of ``schemes``; ``attachment://name`` too
    where ``attachments`` (the names uploaded with the message) is given."""
    if value is None:
        return
    if not isinstance(value, str):
        errors.add(path, "BASE_TYPE_STRING", "Must be a string.")
        return
    if _text(errors, path, value, maximum) > maximum:
        return  # Discord names the length alone
    if attachments is not None and value.startswith("attachment://"):
        name = value.removeprefix("attachment://")
        if name not in attachments:
            errors.add(
                path,
                "URL_TYPE_INVALID_ATTACHMENT",
                f"Attachment {name!r} was not uploaded with this message.",
            )
        return
    scheme = uri_scheme(value)
    allowed = (*schemes, "attachment") if attachments is not None else schemes
    if scheme is None:
        errors.add(path, "URL_TYPE_INVALID_URL", "Not a well formed URL.")
    elif scheme not in allowed:
        errors.add(
            path,
            "URL_TYPE_INVALID_SCHEME",
            f'Scheme "{scheme[:20]}" is not supported. Scheme must be one of {allowed}.',
        )


def _snowflake(value: Any) -> bool:
    text = str(value)
    return text.isdigit() and 0 < int(text) < 1 << 64


# Messages --------------------------------------------------------------------------------------


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
    for index, item in enumerate(fields):
        where = (*path, "fields", index)
        item = _object(errors, where, item)
        if item is None:
            continue
        total += _text(
            errors, (*where, "name"), item.get("name"), FIELD_NAME_MAX, minimum=1, required=True
        )
        total += _text(
            errors, (*where, "value"), item.get("value"), FIELD_VALUE_MAX, minimum=1, required=True
        )
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


# Components ------------------------------------------------------------------------------------


def check_components(value: Any, errors: FormErrors, path: Path) -> None:
    """Message components: action rows of buttons or one select menu; custom ids unique."""
    rows = _array(errors, path, value, ACTION_ROWS_MAX)
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = (*path, index)
        row = _action_row(errors, where, row)
        if row is None:
            continue
        children = _array(errors, (*where, "components"), row.get("components"), ROW_WIDTH_MAX, 1)
        if row.get("components") is None:
            errors.add((*where, "components"), "BASE_TYPE_REQUIRED", "This field is required")
        selects = [c for c in children if isinstance(c, dict) and c.get("type") in SELECT_MENUS]
        if selects and len(children) > 1:
            errors.add(
                (*where, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for position, child in enumerate(children):
            spot = (*where, "components", position)
            child = _object(errors, spot, child)
            if child is None:
                continue
            kind = child.get("type")
            if kind == BUTTON:
                _button(child, errors, spot)
            elif kind in SELECT_MENUS:
                _select(child, errors, spot)
            else:
                errors.add(
                    (*spot, "type"),
                    "UNION_TYPE_CHOICES",
                    'Value of field "type" must be one of (2, 3, 5, 6, 7, 8).',
                )
                continue
            _unique_custom_id(child, seen, errors, spot)


def _action_row(errors: FormErrors, where: Path, row: Any) -> dict[str, Any] | None:
    """``row`` when it is an action row (a message's or a modal's); else None, the error added."""
    found = _object(errors, where, row)
    if found is None:
        return None
    if found.get("type") != ACTION_ROW:
        errors.add((*where, "type"), "UNION_TYPE_CHOICES", "Value must be an action row here.")
        return None
    return found


def _unique_custom_id(
    component: dict[str, Any], seen: set[str], errors: FormErrors, where: Path
) -> None:
    """Custom ids are unique across one message's (or one modal's) components."""
    custom_id = component.get("custom_id")
    if isinstance(custom_id, str):
        if custom_id in seen:
            errors.add(
                (*where, "custom_id"),
                "COMPONENT_CUSTOM_ID_DUPLICATED",
                "Component custom id cannot be duplicated",
            )
        seen.add(custom_id)


def _button(button: dict[str, Any], errors: FormErrors, path: Path) -> None:
    style = button.get("style")
    if style not in BUTTON_STYLES:
        errors.add(
            (*path, "style"), "BASE_TYPE_CHOICES", f"Value must be one of {sorted(BUTTON_STYLES)}."
        )
        return
    _text(errors, (*path, "label"), button.get("label"), BUTTON_LABEL_MAX)
    if style == LINK_STYLE:
        if button.get("url") is None:
            errors.add((*path, "url"), "BUTTON_COMPONENT_URL_REQUIRED", "A url is required")
        else:
            _url(
                errors,
                (*path, "url"),
                button.get("url"),
                attachments=None,
                maximum=BUTTON_URL_MAX,
                schemes=BUTTON_SCHEMES,
            )
        if button.get("custom_id") is not None:
            errors.add(
                (*path, "custom_id"),
                "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                "A custom id cannot be specified on a link button",
            )
    elif style == PREMIUM_STYLE:
        if button.get("sku_id") is None:
            errors.add((*path, "sku_id"), "BASE_TYPE_REQUIRED", "This field is required")
    else:
        if button.get("url") is not None:
            errors.add(
                (*path, "url"),
                "BUTTON_COMPONENT_URL_NOT_ALLOWED",
                "A url can only be specified on a link button",
            )
        if button.get("custom_id") is None:
            errors.add(
                (*path, "custom_id"),
                "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED",
                "A custom id is required",
            )
        else:
            _text(errors, (*path, "custom_id"), button.get("custom_id"), CUSTOM_ID_MAX, minimum=1)
    if style != PREMIUM_STYLE and not button.get("label") and not button.get("emoji"):
        errors.add(
            path, "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED", "A label or an emoji is required"
        )


def _select(select: dict[str, Any], errors: FormErrors, path: Path) -> None:
    _text(
        errors,
        (*path, "custom_id"),
        select.get("custom_id"),
        CUSTOM_ID_MAX,
        minimum=1,
        required=True,
    )
    _text(errors, (*path, "placeholder"), select.get("placeholder"), SELECT_PLACEHOLDER_MAX)
    _integer(errors, (*path, "min_values"), select.get("min_values"), 0, SELECT_VALUES_MAX)
    _integer(errors, (*path, "max_values"), select.get("max_values"), 1, SELECT_VALUES_MAX)
    if select.get("type") != STRING_SELECT:
        return
    if select.get("options") is None:
        errors.add((*path, "options"), "BASE_TYPE_REQUIRED", "This field is required")
    options = _array(errors, (*path, "options"), select.get("options"), SELECT_OPTIONS_MAX, 1)
    values: set[str] = set()
    for index, option in enumerate(options):
        where = (*path, "options", index)
        option = _object(errors, where, option)
        if option is None:
            continue
        value = option.get("value")
        if isinstance(value, str):
            if value in values:  # Discord names the later duplicate
                errors.add(
                    where,
                    "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
                    "The specified option value is already used",
                )
            values.add(value)
        for key in ("label", "value"):
            _text(
                errors,
                (*where, key),
                option.get(key),
                SELECT_OPTION_TEXT_MAX,
                minimum=1,
                required=True,
            )
        _text(errors, (*where, "description"), option.get("description"), SELECT_OPTION_TEXT_MAX)


# Interaction callbacks ------------------------------------------------------------------------


def check_callback(
    body: Any, interaction_type: int, errors: FormErrors, *, uploads: Iterable[str] = ()
) -> Rejection | None:
    """POST /interactions/{id}/{token}/callback: a type the interaction allows, and its data."""
    body = _object(errors, (), body)
    if body is None:
        return rejection(errors)
    kind = body.get("type")
    allowed = ALLOWED_CALLBACKS.get(interaction_type, frozenset())
    if kind not in allowed:
        errors.add(
            ("type",),
            "INTERACTION_CALLBACK_TYPE_INVALID",
            f"Value must be one of {sorted(allowed)} for this interaction.",
        )
        return rejection(errors)
    data = body.get("data")
    if kind == CHANNEL_MESSAGE:
        check_message(data, errors, uploads=uploads, path=("data",))
        if not errors and is_empty(data or {}, uploads):
            return empty_message()
    elif kind == UPDATE_MESSAGE and data is not None:
        check_message(data, errors, uploads=uploads, path=("data",))
    elif kind == DEFERRED_CHANNEL_MESSAGE and data is not None:
        deferred = _object(errors, ("data",), data) or {}
        _integer(errors, ("data", "flags"), deferred.get("flags"), 0, (1 << 31) - 1)
    elif kind == AUTOCOMPLETE_RESULT:
        check_autocomplete(data, errors, ("data",))
    elif kind == MODAL:
        check_modal(data, errors, ("data",))
    return rejection(errors)


def check_autocomplete(data: Any, errors: FormErrors, path: Path) -> None:
    data = _object(errors, path, data)
    if data is None:
        errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return
    choices = _array(errors, (*path, "choices"), data.get("choices"), CHOICES_MAX)
    for index, choice in enumerate(choices):
        _choice(choice, errors, (*path, "choices", index))


def _choice(choice: Any, errors: FormErrors, path: Path) -> None:
    choice = _object(errors, path, choice)
    if choice is None:
        return
    _text(errors, (*path, "name"), choice.get("name"), CHOICE_NAME_MAX, minimum=1, required=True)
    _localizations(errors, (*path, "name_localizations"), choice, "name", CHOICE_NAME_MAX)
    value = choice.get("value")
    if isinstance(value, str):
        _text(errors, (*path, "value"), value, CHOICE_STRING_VALUE_MAX)
    elif value is None or isinstance(value, bool) or not isinstance(value, int | float):
        errors.add((*path, "value"), "BASE_TYPE_REQUIRED", "Must be a string, integer or number.")


def _localizations(
    errors: FormErrors, path: Path, item: Mapping[str, Any], field_name: str, maximum: int
) -> None:
    """``name_localizations`` / ``description_localizations``: null or an object of at most 34
    Discord locales, each value 1 to ``maximum`` characters (a command or option name
    localised must also be a valid lowercase name)."""
    value = item.get(f"{field_name}_localizations")
    if value is None:
        return
    if not isinstance(value, dict):
        errors.add(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
        return
    if len(value) > len(LOCALES):
        errors.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {len(LOCALES)} or fewer in length.")
    for locale, text in value.items():
        if locale not in LOCALES:
            errors.add(
                (*path, str(locale)),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {sorted(LOCALES)}.",
            )
            continue
        _text(errors, (*path, locale), text, maximum, minimum=1, required=True)
        named = field_name == "name" and maximum == COMMAND_NAME_MAX and isinstance(text, str)
        if named and 0 < len(text) <= maximum and not valid_command_name(text, lowercase=True):
            errors.add(
                (*path, locale), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid"
            )


def check_modal(data: Any, errors: FormErrors, path: Path) -> None:
    """A modal: title 1-45, custom id 1-100, 1-5 action rows each holding one text input."""
    data = _object(errors, path, data)
    if data is None:
        errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return
    _text(errors, (*path, "title"), data.get("title"), MODAL_TITLE_MAX, minimum=1, required=True)
    _text(
        errors, (*path, "custom_id"), data.get("custom_id"), CUSTOM_ID_MAX, minimum=1, required=True
    )
    if data.get("components") is None:
        errors.add((*path, "components"), "BASE_TYPE_REQUIRED", "This field is required")
    rows = _array(errors, (*path, "components"), data.get("components"), MODAL_ROWS_MAX, 1)
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = (*path, "components", index)
        row = _action_row(errors, where, row)
        if row is None:
            continue
        inputs = _array(errors, (*where, "components"), row.get("components"), 1, 1)
        for position, text_input in enumerate(inputs):
            spot = (*where, "components", position)
            text_input = _object(errors, spot, text_input)
            if text_input is None:
                continue
            _text_input(text_input, errors, spot)
            _unique_custom_id(text_input, seen, errors, spot)


def _text_input(text_input: dict[str, Any], errors: FormErrors, path: Path) -> None:
    if text_input.get("type") != TEXT_INPUT:
        errors.add((*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be 4.')
        return
    if text_input.get("style") not in TEXT_INPUT_STYLES:
        errors.add((*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2).")
    _text(
        errors,
        (*path, "custom_id"),
        text_input.get("custom_id"),
        CUSTOM_ID_MAX,
        minimum=1,
        required=True,
    )
    _text(
        errors,
        (*path, "label"),
        text_input.get("label"),
        TEXT_INPUT_LABEL_MAX,
        minimum=1,
        required=True,
    )
    _text(errors, (*path, "placeholder"), text_input.get("placeholder"), TEXT_INPUT_PLACEHOLDER_MAX)
    _text(errors, (*path, "value"), text_input.get("value"), TEXT_INPUT_VALUE_MAX)
    low = _integer(
        errors, (*path, "min_length"), text_input.get("min_length"), 0, TEXT_INPUT_VALUE_MAX
    )
    high = _integer(
        errors, (*path, "max_length"), text_input.get("max_length"), 1, TEXT_INPUT_VALUE_MAX
    )
    if low is not None and high is not None and low > high:
        errors.add(
            (*path, "min_length"), "BASE_TYPE_BAD_INT", "min_length must not exceed max_length."
        )


# Application commands -------------------------------------------------------------------------


def _name_char_ok(char: str) -> bool:
    if char in NAME_PUNCTUATION:
        return True
    if unicodedata.category(char)[0] in "LN":
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in (*DEVANAGARI, *THAI))


def valid_command_name(name: str, *, lowercase: bool) -> bool:
    """``^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``, lowercase for chat-input names."""
    if not 1 <= len(name) <= COMMAND_NAME_MAX or not all(_name_char_ok(c) for c in name):
        return False
    return not lowercase or name == name.lower()


def check_commands(commands: Any, errors: FormErrors) -> None:
    """PUT (bulk overwrite) of application commands for one scope."""
    if not isinstance(commands, list):
        errors.add((), "BASE_TYPE_ARRAY", "Must be an array.")
        return
    counts = {CHAT_INPUT: 0, USER_COMMAND: 0, MESSAGE_COMMAND: 0}
    names: set[tuple[int, str]] = set()
    for index, command in enumerate(commands):
        command = _object(errors, (index,), command)
        if command is None:
            continue
        kind = command.get("type") or CHAT_INPUT
        if kind not in counts:
            errors.add((index, "type"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3).")
            continue
        counts[kind] += 1
        name = command.get("name")
        if isinstance(name, str) and (kind, name) in names:
            errors.add(
                (index, "name"),
                "APPLICATION_COMMANDS_DUPLICATE_NAME",
                f"Application command names must be unique: {name}",
            )
        names.add((kind, str(name)))
        _command(command, kind, errors, (index,))
    if counts[CHAT_INPUT] > CHAT_INPUT_COMMANDS_MAX:
        errors.add(
            (), "BASE_TYPE_MAX_LENGTH", f"Must be {CHAT_INPUT_COMMANDS_MAX} or fewer in length."
        )
    for kind in (USER_COMMAND, MESSAGE_COMMAND):
        if counts[kind] > CONTEXT_COMMANDS_MAX:
            errors.add(
                (),
                "APPLICATION_COMMANDS_TOO_MANY",
                f"Maximum number of context menu commands ({CONTEXT_COMMANDS_MAX}) reached.",
            )


def _command(command: dict[str, Any], kind: int, errors: FormErrors, path: Path) -> None:
    name = command.get("name")
    chat = kind == CHAT_INPUT
    if not isinstance(name, str):
        errors.add((*path, "name"), "BASE_TYPE_REQUIRED", "This field is required")
    elif chat and not valid_command_name(name, lowercase=True):
        errors.add((*path, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
    elif not chat:
        _text(errors, (*path, "name"), name, COMMAND_NAME_MAX, minimum=1)
    description = command.get("description")
    if chat:
        _text(
            errors,
            (*path, "description"),
            description,
            COMMAND_DESCRIPTION_MAX,
            minimum=1,
            required=True,
        )
    _localizations(errors, (*path, "name_localizations"), command, "name", COMMAND_NAME_MAX)
    _localizations(
        errors,
        (*path, "description_localizations"),
        command,
        "description",
        COMMAND_DESCRIPTION_MAX,
    )
    if not chat and description:
        errors.add(
            (*path, "description"),
            "APPLICATION_COMMAND_DESCRIPTION_NOT_ALLOWED",
            "Context menu commands cannot have a description",
        )
    options = command.get("options")
    if options and not chat:
        errors.add(
            (*path, "options"),
            "APPLICATION_COMMAND_OPTIONS_NOT_ALLOWED",
            "Context menu commands cannot have options",
        )
        return
    _options(options, errors, (*path, "options"), depth=0)
    if chat and _size(command) > COMMAND_TOTAL_MAX:
        errors.add(
            path,
            "APPLICATION_COMMAND_TOO_LARGE",
            f"Command exceeds maximum size ({COMMAND_TOTAL_MAX})",
        )


def _size(item: Mapping[str, Any]) -> int:
    """Names, descriptions and choice names/values of a command and all its options."""
    total = len(str(item.get("name") or "")) + len(str(item.get("description") or ""))
    for choice in item.get("choices") or []:
        if isinstance(choice, dict):
            total += len(str(choice.get("name") or "")) + len(str(choice.get("value") or ""))
    for option in item.get("options") or []:
        if isinstance(option, dict):
            total += _size(option)
    return total


def _options(value: Any, errors: FormErrors, path: Path, *, depth: int) -> None:
    """depth 0: a command's options; 1: a group's or top subcommand's; 2: a grouped subcommand's."""
    options = _array(errors, path, value, COMMAND_OPTIONS_MAX)
    kinds = [o.get("type") for o in options if isinstance(o, dict)]
    nested = [k for k in kinds if k in (SUB_COMMAND, SUB_COMMAND_GROUP)]
    if nested and len(nested) != len(kinds):
        errors.add(
            path,
            "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
            "Sub-command and sub-command group option types are mutually exclusive "
            "to all other types",
        )
    seen_optional = False
    names: set[str] = set()
    for index, option in enumerate(options):
        where = (*path, index)
        option = _object(errors, where, option)
        if option is None:
            continue
        kind = option.get("type")
        if kind not in OPTION_TYPES:
            errors.add((*where, "type"), "BASE_TYPE_CHOICES", "Value must be one of (1..11).")
            continue
        name = option.get("name")
        if not isinstance(name, str) or not valid_command_name(name, lowercase=True):
            errors.add(
                (*where, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid"
            )
        elif name in names:
            errors.add(
                (*where, "name"),
                "APPLICATION_COMMAND_OPTION_NAME_DUPLICATED",
                "Option names must be unique",
            )
        names.add(str(name))
        _text(
            errors,
            (*where, "description"),
            option.get("description"),
            COMMAND_DESCRIPTION_MAX,
            minimum=1,
            required=True,
        )
        _localizations(errors, (*where, "name_localizations"), option, "name", COMMAND_NAME_MAX)
        _localizations(
            errors,
            (*where, "description_localizations"),
            option,
            "description",
            COMMAND_DESCRIPTION_MAX,
        )
        if kind == SUB_COMMAND_GROUP:
            if depth != 0:
                errors.add(
                    (*where, "type"),
                    "APPLICATION_COMMAND_OPTION_NESTING",
                    "Sub-command groups can only be nested in a command",
                )
            sub = option.get("options") or []
            if any(not isinstance(o, dict) or o.get("type") != SUB_COMMAND for o in sub):
                errors.add(
                    (*where, "options"),
                    "APPLICATION_COMMAND_OPTION_NESTING",
                    "A sub-command group may only contain sub-commands",
                )
            _options(sub, errors, (*where, "options"), depth=1)
            continue
        if kind == SUB_COMMAND:
            if depth == 2:
                errors.add(
                    (*where, "type"),
                    "APPLICATION_COMMAND_OPTION_NESTING",
                    "Sub-commands nest at most two levels",
                )
            sub = option.get("options") or []
            if any(
                isinstance(o, dict) and o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP)
                for o in sub
            ):
                errors.add(
                    (*where, "options"),
                    "APPLICATION_COMMAND_OPTION_NESTING",
                    "A sub-command may only contain value options",
                )
            _options(sub, errors, (*where, "options"), depth=2)
            continue
        if option.get("required"):
            if seen_optional:
                errors.add(
                    (*where, "required"),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options",
                )
        else:
            seen_optional = True
        choices = _array(errors, (*where, "choices"), option.get("choices"), CHOICES_MAX)
        for position, choice in enumerate(choices):
            _choice(choice, errors, (*where, "choices", position))
        if choices and option.get("autocomplete"):
            errors.add(
                (*where, "autocomplete"),
                "APPLICATION_COMMAND_AUTOCOMPLETE_CHOICES",
                "Autocomplete and choices are mutually exclusive",
            )
        if kind == STRING_OPTION:
            _integer(
                errors,
                (*where, "min_length"),
                option.get("min_length"),
                0,
                STRING_OPTION_LENGTH_MAX,
            )
            _integer(
                errors,
                (*where, "max_length"),
                option.get("max_length"),
                1,
                STRING_OPTION_LENGTH_MAX,
            )


# Voice (gateway op 4 and PATCH /guilds/{guild}/voice-states/@me) -------------------------------

VOICE_STATE_FIELDS = frozenset({"guild_id", "channel_id", "self_mute", "self_deaf"})
MY_VOICE_STATE_FIELDS = frozenset({"channel_id", "suppress", "request_to_speak_timestamp"})
UNKNOWN_VOICE_STATE = 10065
MISSING_PERMISSIONS = 50013
INVALID_CHANNEL_TYPE = 50024


def check_gateway_voice_state(data: Any) -> str | None:
    """Op 4's ``d``: what is wrong with it (Discord closes the gateway with 4002), or None."""
    if not isinstance(data, dict):
        return "op 4 without an object"
    if set(data) != VOICE_STATE_FIELDS:
        return f"op 4 fields {sorted(data)[:8]} are not {sorted(VOICE_STATE_FIELDS)}"
    if not _snowflake(data["guild_id"]) or isinstance(data["guild_id"], bool):
        return "op 4 guild_id is not a snowflake"
    channel = data["channel_id"]
    if channel is not None and (isinstance(channel, bool) or not _snowflake(channel)):
        return "op 4 channel_id is not a snowflake or null"
    if not isinstance(data["self_mute"], bool) or not isinstance(data["self_deaf"], bool):
        return "op 4 self_mute/self_deaf are not booleans"
    return None


def check_my_voice_state(body: Any, errors: FormErrors) -> None:
    """Modify Current User Voice State: three optional fields (the fake rejects any other)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    for name in sorted(set(body) - MY_VOICE_STATE_FIELDS)[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    channel = body.get("channel_id")
    if channel is not None and (isinstance(channel, bool) or not _snowflake(channel)):
        errors.add(("channel_id",), "NUMBER_TYPE_COERCE", f'Value "{channel}" is not snowflake.')
    suppress = body.get("suppress")
    if suppress is not None and not isinstance(suppress, bool):
        errors.add(("suppress",), "BASE_TYPE_BOOLEAN", "Must be either true or false.")
    stamp = body.get("request_to_speak_timestamp")
    if stamp is not None and not _iso8601(stamp):
        errors.add(
            ("request_to_speak_timestamp",), "DATE_TIME_TYPE_PARSE", "Could not parse the date."
        )


def _iso8601(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def missing_permissions() -> Rejection:
    return Rejection.error(403, MISSING_PERMISSIONS, "Missing Permissions")


def unknown_voice_state() -> Rejection:
    return Rejection.error(404, UNKNOWN_VOICE_STATE, "Unknown Voice State")


def invalid_channel_type() -> Rejection:
    return Rejection.error(400, INVALID_CHANNEL_TYPE, "Cannot execute action on this channel type")


# Presence (gateway op 3, Update Presence) ------------------------------------------------------

PRESENCE_FIELDS = frozenset({"since", "activities", "status", "afk"})
PRESENCE_STATUSES = frozenset({"online", "dnd", "idle", "invisible", "offline"})
ACTIVITY_TYPES = range(0, 6)  # playing, streaming, listening, watching, custom, competing
ACTIVITY_NAME_MAX = 128
ACTIVITY_TEXT_MAX = 128  # state and details
ACTIVITY_URL_MAX = 512
ACTIVITIES_MAX = 10


def check_presence_update(data: Any) -> str | None:
    """Op 3's ``d`` as Discord documents it (``since`` int or null, ``activities``, ``status``,
    ``afk``; activity ``name`` required, ``type`` 0-5, optional ``state``/``url``): what is
    wrong with it (Discord closes the gateway with 4002), or None.

    discord.py sends ``since: 0.0``, which Discord accepts: an integral float passes. Fields a
    bot cannot set (``flags``, ``buttons``, as discord.py's ``Activity.to_dict`` adds) are
    ignored by Discord and here, but must still have their JSON type."""
    if not isinstance(data, dict):
        return "op 3 without an object"
    if set(data) != PRESENCE_FIELDS:
        return f"op 3 fields {sorted(data)[:8]} are not {sorted(PRESENCE_FIELDS)}"
    since = data["since"]
    if since is not None and (
        isinstance(since, bool)
        or not isinstance(since, int | float)
        or since != int(since)
        or since < 0
    ):
        return "op 3 since is not a unix time in milliseconds or null"
    if data["status"] not in PRESENCE_STATUSES:
        return f"op 3 status {str(data['status'])[:20]!r} is not one of {sorted(PRESENCE_STATUSES)}"
    if not isinstance(data["afk"], bool):
        return "op 3 afk is not a boolean"
    activities = data["activities"]
    if not isinstance(activities, list) or len(activities) > ACTIVITIES_MAX:
        return f"op 3 activities is not a list of at most {ACTIVITIES_MAX}"
    for activity in activities:
        problem = _check_activity(activity)
        if problem is not None:
            return problem
    return None


def _check_activity(activity: Any) -> str | None:
    if not isinstance(activity, dict):
        return "op 3 activity is not an object"
    name = activity.get("name")
    if not isinstance(name, str) or not name.strip():
        return "op 3 activity without a name"
    if len(name) > ACTIVITY_NAME_MAX:
        return f"op 3 activity name is {len(name)} characters (at most {ACTIVITY_NAME_MAX})"
    kind = activity.get("type")
    if isinstance(kind, bool) or not isinstance(kind, int) or kind not in ACTIVITY_TYPES:
        return "op 3 activity type is not 0-5"
    for key, limit in (("state", ACTIVITY_TEXT_MAX), ("details", ACTIVITY_TEXT_MAX)):
        value = activity.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > limit):
            return f"op 3 activity {key} is not a string of at most {limit} characters"
    url = activity.get("url")
    if url is not None and (not isinstance(url, str) or len(url) > ACTIVITY_URL_MAX):
        return "op 3 activity url is not a string"
    flags = activity.get("flags", 0)
    if isinstance(flags, bool) or not isinstance(flags, int):
        return "op 3 activity flags is not an integer"
    if not isinstance(activity.get("buttons", []), list):
        return "op 3 activity buttons is not a list"
    return None


# Voice channel status (PUT /channels/{channel}/voice-status) -----------------------------------

VOICE_STATUS_MAX = 500
SET_VOICE_CHANNEL_STATUS = 1 << 48


def check_voice_status(body: Any, errors: FormErrors) -> None:
    """``{"status": string or null}``, at most 500 characters (discord-openapi.json)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    for name in sorted(set(body) - {"status"})[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    _text(errors, ("status",), body.get("status"), VOICE_STATUS_MAX)


# Stage instances (POST /stage-instances, PATCH /stage-instances/{channel}) ----------------------

STAGE_TOPIC_MIN, STAGE_TOPIC_MAX = 1, 120
UNKNOWN_STAGE_INSTANCE = 10067
STAGE_ALREADY_OPEN = 150006


def check_stage_instance(body: Any, errors: FormErrors, *, create: bool) -> None:
    """A stage instance's ``topic`` (1-120 characters; required on create, with ``channel_id``)
    and ``privacy_level`` (2, guild only: public stages are gone)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    allowed = {"topic", "privacy_level"} | (
        {"channel_id", "send_start_notification", "guild_scheduled_event_id"} if create else set()
    )
    for name in sorted(set(body) - allowed)[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    _text(
        errors,
        ("topic",),
        body.get("topic"),
        STAGE_TOPIC_MAX,
        minimum=STAGE_TOPIC_MIN,
        required=create,
    )
    if create and not _snowflake(body.get("channel_id")):
        errors.add(("channel_id",), "BASE_TYPE_REQUIRED", "This field is required")
    level = body.get("privacy_level")
    if level is not None and level != 2:
        errors.add(("privacy_level",), "BASE_TYPE_CHOICES", "Value must be one of {2}.")


def unknown_stage_instance() -> Rejection:
    return Rejection.error(404, UNKNOWN_STAGE_INSTANCE, "Unknown Stage Instance")


# Guild scheduled events (/guilds/{guild}/scheduled-events[/{event}]) ------------------------------

MANAGE_EVENTS = 1 << 33
EVENT_NAME_MAX = 100
EVENT_DESCRIPTION_MAX = 1000
EVENT_LOCATION_MAX = 100
EVENTS_MAX = 100  # SCHEDULED and ACTIVE events a guild may have at once
STAGE_INSTANCE, VOICE, EXTERNAL = 1, 2, 3
SCHEDULED, ACTIVE, COMPLETED, CANCELED = 1, 2, 3, 4
GUILD_ONLY = 2
# Discord: SCHEDULED → ACTIVE or CANCELED; ACTIVE → COMPLETED; COMPLETED and CANCELED are final.
EVENT_TRANSITIONS: dict[int, frozenset[int]] = {
    SCHEDULED: frozenset({ACTIVE, CANCELED}),
    ACTIVE: frozenset({COMPLETED}),
    COMPLETED: frozenset(),
    CANCELED: frozenset(),
}
UNKNOWN_SCHEDULED_EVENT = 10070
FINISHED_EVENT = 180000  # Cannot update a finished event (COMPLETED and CANCELED are final)
FINISHED_STATUSES = frozenset({COMPLETED, CANCELED})
MAX_EVENTS_REACHED = 30038
EVENT_FIELDS = frozenset(
    {
        "name",
        "description",
        "image",
        "scheduled_start_time",
        "scheduled_end_time",
        "privacy_level",
        "entity_type",
        "channel_id",
        "entity_metadata",
        "recurrence_rule",
        "status",
    }
)


def _moment(errors: FormErrors, path: Path, value: Any, *, required: bool) -> datetime | None:
    """An ISO 8601 timestamp with a zone (Discord refuses one without)."""
    if value is None:
        if required:
            errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return None
    if not _iso8601(value):
        errors.add(path, "DATE_TIME_TYPE_PARSE", "Could not parse the date.")
        return None
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        errors.add(path, "DATE_TIME_TYPE_PARSE", "Could not parse the date.")
        return None
    return moment


def check_scheduled_event(
    body: Any,
    errors: FormErrors,
    *,
    current: Mapping[str, Any] | None,
    now: datetime,
) -> None:
    """Create (``current`` None) or modify a scheduled event, per discord-openapi.json and
    Discord's documentation: name 1-100, description at most 1000, privacy_level 2 (guild only),
    entity_type 1-3; an EXTERNAL event needs entity_metadata.location (1-100) and a
    scheduled_end_time, and no channel_id; a new event starts in the future and ends after it
    starts; ``status`` moves only SCHEDULED → ACTIVE → COMPLETED or SCHEDULED → CANCELED (and is
    not settable on create)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    create = current is None
    for name in sorted(set(body) - EVENT_FIELDS)[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    _text(errors, ("name",), body.get("name"), EVENT_NAME_MAX, minimum=1, required=create)
    _text(errors, ("description",), body.get("description"), EVENT_DESCRIPTION_MAX)
    level = body.get("privacy_level")
    if (create or level is not None) and level != GUILD_ONLY:
        errors.add(("privacy_level",), "BASE_TYPE_CHOICES", "Value must be one of {2}.")
    merged: dict[str, Any] = {**(current or {}), **body}
    kind = merged.get("entity_type")
    if kind not in (STAGE_INSTANCE, VOICE, EXTERNAL):
        errors.add(("entity_type",), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3}.")
    start = _moment(
        errors, ("scheduled_start_time",), body.get("scheduled_start_time"), required=create
    )
    end = _moment(errors, ("scheduled_end_time",), body.get("scheduled_end_time"), required=False)
    if create and start is not None and start <= now:
        errors.add(
            ("scheduled_start_time",),
            "GUILD_SCHEDULED_EVENT_SCHEDULE_PAST",
            "Cannot schedule event in the past.",
        )
    if start is None and current is not None and merged.get("scheduled_start_time"):
        start = datetime.fromisoformat(str(merged["scheduled_start_time"]))
    if end is not None and start is not None and end <= start:
        errors.add(
            ("scheduled_end_time",),
            "GUILD_SCHEDULED_EVENT_END_BEFORE_START",
            "Cannot schedule event to end before starting.",
        )
    if kind == EXTERNAL:
        if merged.get("channel_id") is not None:
            errors.add(
                ("channel_id",),
                "GUILD_SCHEDULED_EVENT_CHANNEL_NOT_ALLOWED",
                "External events cannot have a channel.",
            )
        metadata = _object(errors, ("entity_metadata",), merged.get("entity_metadata"))
        location = (metadata or {}).get("location")
        _text(
            errors,
            ("entity_metadata", "location"),
            location,
            EVENT_LOCATION_MAX,
            minimum=1,
            required=True,
        )
        if merged.get("scheduled_end_time") is None:
            errors.add(
                ("scheduled_end_time",),
                "GUILD_SCHEDULED_EVENT_REQUIRES_END_TIME",
                "External events require an end time.",
            )
    elif kind in (STAGE_INSTANCE, VOICE) and not _snowflake(merged.get("channel_id")):
        errors.add(("channel_id",), "BASE_TYPE_REQUIRED", "This field is required")
    status = body.get("status")
    if status is None:
        return
    if create:
        errors.add(("status",), "UNKNOWN_FIELD", "This field is not accepted here.")
    elif status not in EVENT_TRANSITIONS:
        errors.add(("status",), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4}.")
    elif (
        current is not None
        and status != current.get("status")
        and status not in EVENT_TRANSITIONS[int(current.get("status") or 0)]
    ):
        errors.add(
            ("status",),
            "GUILD_SCHEDULED_EVENT_INVALID_STATUS_TRANSITION",
            "Invalid status transition.",
        )


def unknown_scheduled_event() -> Rejection:
    return Rejection.error(404, UNKNOWN_SCHEDULED_EVENT, "Unknown Guild Scheduled Event")


def finished_event() -> Rejection:
    """Any change to a COMPLETED or CANCELED event (Discord's JSON error 180000)."""
    return Rejection.error(400, FINISHED_EVENT, "Cannot update a finished event")


def too_many_events() -> Rejection:
    return Rejection(
        400,
        {
            "code": MAX_EVENTS_REACHED,
            "message": f"Maximum number of guild scheduled events reached ({EVENTS_MAX})",
        },
    )
