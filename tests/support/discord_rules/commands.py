"""Application commands as the bot syncs them (PUT .../commands): names, descriptions, options,
choices, localised names and Discord's per-command and per-application limits.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from .constants import (
    CHAT_INPUT,
    CHAT_INPUT_COMMANDS_MAX,
    CHOICE_NAME_MAX,
    CHOICE_STRING_VALUE_MAX,
    CHOICES_MAX,
    COMMAND_DESCRIPTION_MAX,
    COMMAND_NAME_MAX,
    COMMAND_OPTIONS_MAX,
    COMMAND_TOTAL_MAX,
    CONTEXT_COMMANDS_MAX,
    DEVANAGARI,
    INTEGRATION_TYPES,
    INTERACTION_CONTEXTS,
    LOCALES,
    MESSAGE_COMMAND,
    NAME_PUNCTUATION,
    OPTION_TYPES,
    STRING_OPTION,
    STRING_OPTION_LENGTH_MAX,
    SUB_COMMAND,
    SUB_COMMAND_GROUP,
    THAI,
    USER_COMMAND,
)
from .errors import FormErrors, Path
from .fields import _array, _integer, _object, _objects, _required_text, _text


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


def check_install_types(commands: Any, supported: tuple[int, ...], errors: FormErrors) -> None:
    """A command may name only install types the application supports ("as long as any
    included contexts are already supported on the application-level", application-commands
    in Discord's docs): one that names another refuses the whole bulk overwrite. Discord
    documents the rule, not its error: a 400 (50035) at that command's ``integration_types``
    is how its other per-command refusals come, and the exact code here is not documented."""
    if not isinstance(commands, list):
        return
    for index, command in enumerate(commands):
        installs = command.get("integration_types") if isinstance(command, dict) else None
        if not isinstance(installs, list):
            continue
        if any(kind in INTEGRATION_TYPES and kind not in supported for kind in installs):
            errors.add(
                (index, "integration_types"),
                "APPLICATION_COMMAND_INTEGRATION_TYPE_NOT_SUPPORTED",
                "Integration types must be supported by the application.",
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
    _localized(errors, path, command)
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
    _enum_set(
        errors, (*path, "integration_types"), command.get("integration_types"), INTEGRATION_TYPES
    )
    _enum_set(errors, (*path, "contexts"), command.get("contexts"), INTERACTION_CONTEXTS)
    if chat and _size(command) > COMMAND_TOTAL_MAX:
        errors.add(
            path,
            "APPLICATION_COMMAND_TOO_LARGE",
            f"Command exceeds maximum size ({COMMAND_TOTAL_MAX})",
        )


def _enum_set(errors: FormErrors, path: Path, value: Any, allowed: tuple[int, ...]) -> None:
    """``integration_types`` / ``contexts``: null, or 1+ distinct values of Discord's enum
    (the OpenAPI description: ``minItems`` 1, ``uniqueItems``)."""
    if value is None:
        return
    if not isinstance(value, list):
        errors.add(path, "BASE_TYPE_ARRAY", "Must be an array.")
        return
    if not value:
        errors.add(path, "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
    for index, item in enumerate(value):
        if isinstance(item, bool) or item not in allowed:
            errors.add(
                (*path, index),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {set(allowed)}.",
            )
    if len({repr(item) for item in value}) != len(value):
        errors.add(path, "BASE_TYPE_DUPLICATES", "Values must be unique.")


def offered(command: Mapping[str, Any], *, install: int, context: int) -> bool:
    """Whether Discord's client offers ``command`` to a user of an app installed as
    ``install`` (0 a server, 1 the user) in ``context`` (0 a server, 1 a DM with the app's bot,
    2 another DM or group DM). ``integration_types`` left out: the application's install types
    (the fake's app has both unless a test takes User Install away); ``contexts`` left out: all
    of them. A user install is used in a DM or a server through its own commands; a server
    install reaches a DM only with the bot (BOT_DM)."""
    installs = command.get("integration_types")
    contexts = command.get("contexts")
    if installs is not None and install not in installs:
        return False
    if contexts is not None and context not in contexts:
        return False
    return install == 1 or context != 2


def _longest(item: Mapping[str, Any], field: str) -> int:
    """A field's length as Discord counts it: its longest localization, the default included."""
    texts = [item.get(field) or ""]
    localized = item.get(f"{field}_localizations")
    if isinstance(localized, Mapping):
        texts += list(localized.values())
    return max(len(str(text or "")) for text in texts)


def _size(item: Mapping[str, Any]) -> int:
    """Names, descriptions and choice names/values of a command and all its options, each name
    and description at its longest localization."""
    total = _longest(item, "name") + _longest(item, "description")
    for choice in item.get("choices") or []:
        if isinstance(choice, dict):
            total += _longest(choice, "name") + len(str(choice.get("value") or ""))
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
    for where, option in _objects(errors, path, options):
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
        _required_text(errors, where, option, "description", COMMAND_DESCRIPTION_MAX)
        _localized(errors, where, option)
        if kind == SUB_COMMAND_GROUP:
            if depth != 0:
                _nesting(
                    errors, (*where, "type"), "Sub-command groups can only be nested in a command"
                )
            sub = option.get("options") or []
            if any(not isinstance(o, dict) or o.get("type") != SUB_COMMAND for o in sub):
                _nesting(
                    errors, (*where, "options"), "A sub-command group may only contain sub-commands"
                )
            _options(sub, errors, (*where, "options"), depth=1)
            continue
        if kind == SUB_COMMAND:
            if depth == 2:
                _nesting(errors, (*where, "type"), "Sub-commands nest at most two levels")
            sub = option.get("options") or []
            if any(
                isinstance(o, dict) and o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP)
                for o in sub
            ):
                _nesting(
                    errors, (*where, "options"), "A sub-command may only contain value options"
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


def _choice(choice: Any, errors: FormErrors, path: Path) -> None:
    choice = _object(errors, path, choice)
    if choice is None:
        return
    _required_text(errors, path, choice, "name", CHOICE_NAME_MAX)
    _localizations(errors, (*path, "name_localizations"), choice, "name", CHOICE_NAME_MAX)
    value = choice.get("value")
    if isinstance(value, str):
        _text(errors, (*path, "value"), value, CHOICE_STRING_VALUE_MAX)
    elif value is None or isinstance(value, bool) or not isinstance(value, int | float):
        errors.add((*path, "value"), "BASE_TYPE_REQUIRED", "Must be a string, integer or number.")


def _nesting(errors: FormErrors, path: Path, message: str) -> None:
    """Options nested where Discord does not allow them (groups, sub-commands, values)."""
    errors.add(path, "APPLICATION_COMMAND_OPTION_NESTING", message)


def _localized(errors: FormErrors, path: Path, item: Mapping[str, Any]) -> None:
    """A command's or an option's ``name_localizations`` and ``description_localizations``."""
    _localizations(errors, (*path, "name_localizations"), item, "name", COMMAND_NAME_MAX)
    _localizations(
        errors,
        (*path, "description_localizations"),
        item,
        "description",
        COMMAND_DESCRIPTION_MAX,
    )


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
