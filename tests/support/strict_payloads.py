"""What the tests of the fake's strictness send: a valid payload of each kind, each just inside
every limit it touches, and the mutations that break one rule (``setter``, ``appending``), with
the error code expected at the field's path (``at``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from . import discord_rules as rules
from .botenv import fake_discord_fixture
from .discord_http import fake_http_fixture

# The fake Discord (``fake``) and a raw HTTP session to it (``http``) every strict test uses.
fake_fixture = fake_discord_fixture()
http_fixture = fake_http_fixture()

Body = dict[str, Any]
Mutation = Callable[[Any], None]
Case = tuple[str, Mutation, str, str]
JSON_TYPE = "application/json"


def at(errors: dict[str, Any], path: str) -> str:
    """The first error code at a dotted path of Discord's nested errors."""
    node = errors
    for part in path.split(".") if path else []:
        assert part in node, f"no error at {path!r}: {json.dumps(errors)}"
        node = node[part]
    assert "_errors" in node, f"no error at {path!r}: {json.dumps(errors)}"
    code: str = node["_errors"][0]["code"]
    return code


def full_embed() -> Body:
    return {
        "title": "t" * 256,
        "description": "d" * 1000,
        "url": "https://example.com/x",
        "fields": [{"name": "n" * 100, "value": "v" * 50} for _ in range(25)],
        "footer": {"text": "f" * 200, "icon_url": "https://example.com/i.png"},
        "author": {"name": "a" * 256, "icon_url": "attachment://logo.png"},
        "image": {"url": "https://example.com/a.png"},
        "thumbnail": {"url": "attachment://logo.png"},
    }


def buttons_row(prefix: str) -> Body:
    return {
        "type": rules.ACTION_ROW,
        "components": [
            {"type": rules.BUTTON, "style": 1, "label": "b" * 80, "custom_id": f"{prefix}{i}"}
            for i in range(5)
        ],
    }


def message() -> Body:
    return {
        "content": "c" * 2000,
        "embeds": [full_embed()] + [{"description": "x"}] * 9,
        "attachments": [{"id": 0, "filename": "logo.png"}],
        "components": [
            buttons_row("a"),
            buttons_row("b"),
            {
                "type": rules.ACTION_ROW,
                "components": [
                    {
                        "type": rules.BUTTON,
                        "style": rules.LINK_STYLE,
                        "label": "Listen",
                        "url": "https://example.com",
                    }
                ],
            },
            {
                "type": rules.ACTION_ROW,
                "components": [
                    {
                        "type": rules.STRING_SELECT,
                        "custom_id": "s" * 100,
                        "placeholder": "p" * 150,
                        "options": [
                            {"label": "l" * 100, "value": f"{i:0>100}", "description": "d" * 100}
                            for i in range(25)
                        ],
                    }
                ],
            },
            buttons_row("c"),
        ],
        "allowed_mentions": {"parse": [], "roles": ["123"], "users": []},
    }


def modal() -> Body:
    row: Body = {
        "type": rules.ACTION_ROW,
        "components": [
            {
                "type": rules.TEXT_INPUT,
                "style": 1,
                "custom_id": "k" * 100,
                "label": "l" * 45,
                "placeholder": "p" * 100,
                "value": "v" * 4000,
                "min_length": 0,
                "max_length": 4000,
            }
        ],
    }
    rows = [copy.deepcopy(row) for _ in range(5)]
    for index, item in enumerate(rows):
        item["components"][0]["custom_id"] = f"{index}" + "k" * 99
    return {
        "type": rules.MODAL,
        "data": {"custom_id": "m" * 100, "title": "t" * 45, "components": rows},
    }


def choices() -> Body:
    return {
        "type": rules.AUTOCOMPLETE_RESULT,
        "data": {
            "choices": [{"name": "n" * 100, "value": f"{i:02}" + "v" * 98} for i in range(25)]
        },
    }


def command(name: str = "nowplaying") -> Body:
    return {
        "name": name,
        "type": rules.CHAT_INPUT,
        "description": "d" * 100,
        # every locale Discord knows, each value at its limit
        "description_localizations": {locale: "d" * 100 for locale in rules.LOCALES},
        "options": [
            {
                "type": rules.STRING_OPTION,
                "name": "station",
                "description": "x",
                "description_localizations": {"pt-BR": "e" * 100, "es-419": "y"},
                "required": True,
            },
            {
                "type": rules.STRING_OPTION,
                "name": "mode",
                "description": "x",
                "choices": [
                    {"name": f"c{i}", "value": f"v{i}", "name_localizations": {"de": "n" * 100}}
                    for i in range(25)
                ],
            },
        ],
    }


def group_command() -> Body:
    sub = {
        "type": rules.SUB_COMMAND,
        "name": "add",
        "description": "x",
        "options": [command()["options"][0]],
    }
    group = {
        "type": rules.SUB_COMMAND_GROUP,
        "name": "station",
        "description": "x",
        "options": [sub],
    }
    return {"name": "onair", "description": "x", "options": [group, {**sub, "name": "status"}]}


def commands() -> list[Body]:
    return [command(f"c{i}") for i in range(99)] + [
        group_command(),
        {"name": "Show Card", "type": rules.MESSAGE_COMMAND, "description": ""},
    ]


def setter(path: str, value: Any) -> Mutation:
    def mutate(body: Any) -> None:
        *parents, last = path.split(".")
        node = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def appending(path: str, factory: Callable[[], Any]) -> Mutation:
    def mutate(body: Any) -> None:
        node = body
        for part in path.split(".") if path else []:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node.append(factory())

    return mutate


def refused_at(what: str, path: str, value: Any, code: str) -> Case:
    """A case that sets ``path`` to ``value`` and expects the error at that same path."""
    return (what, setter(path, value), path, code)


def localised(what: str, where: str, locale: str, text: str, code: str) -> Case:
    """A case that sets one localisation of ``where`` and expects the error at that locale."""
    return (what, setter(where, {locale: text}), f"{where}.{locale}", code)


# Where a localisation goes (see localised), and the code for a key that is no Discord locale.
DESC, NAME = "0.description_localizations", "0.name_localizations"
OPTION_DESC = "0.options.0.description_localizations"
CHOICE_NAME = "0.options.1.choices.0.name_localizations"
LOCALE = "BASE_TYPE_CHOICES"
MAX = "BASE_TYPE_MAX_LENGTH"
MIN = "BASE_TYPE_MIN_LENGTH"
E0 = "embeds.0"
ROW0 = "components.0.components.0"
SCHEME = "URL_TYPE_INVALID_SCHEME"


def mutated(base: Any, mutate: Mutation) -> Any:
    body = copy.deepcopy(base)
    mutate(body)
    return body
