"""Interaction callbacks: which answer fits which interaction, autocomplete choices, modals
and their text inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .commands import check_choice
from .components import action_row, unique_custom_id
from .constants import (
    ALLOWED_CALLBACKS,
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    CHOICES_MAX,
    CUSTOM_ID_MAX,
    DEFERRED_CHANNEL_MESSAGE,
    MODAL,
    MODAL_ROWS_MAX,
    MODAL_TITLE_MAX,
    TEXT_INPUT,
    TEXT_INPUT_LABEL_MAX,
    TEXT_INPUT_PLACEHOLDER_MAX,
    TEXT_INPUT_STYLES,
    TEXT_INPUT_VALUE_MAX,
    UPDATE_MESSAGE,
)
from .errors import FormErrors, Path, Rejection, empty_message, rejection
from .fields import array_field, integer_field, object_field, text_field
from .messages import check_message, is_empty


def check_callback(
    body: Any, interaction_type: int, errors: FormErrors, *, uploads: Iterable[str] = ()
) -> Rejection | None:
    """POST /interactions/{id}/{token}/callback: a type the interaction allows, and its data."""
    body = object_field(errors, (), body)
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
        deferred = object_field(errors, ("data",), data) or {}
        integer_field(errors, ("data", "flags"), deferred.get("flags"), 0, (1 << 31) - 1)
    elif kind == AUTOCOMPLETE_RESULT:
        check_autocomplete(data, errors, ("data",))
    elif kind == MODAL:
        check_modal(data, errors, ("data",))
    return rejection(errors)


def check_autocomplete(data: Any, errors: FormErrors, path: Path) -> None:
    data = object_field(errors, path, data)
    if data is None:
        errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return
    choices = array_field(errors, (*path, "choices"), data.get("choices"), CHOICES_MAX)
    for index, choice in enumerate(choices):
        check_choice(choice, errors, (*path, "choices", index))


def check_modal(data: Any, errors: FormErrors, path: Path) -> None:
    """A modal: title 1-45, custom id 1-100, 1-5 action rows each holding one text input."""
    data = object_field(errors, path, data)
    if data is None:
        errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return
    text_field(
        errors, (*path, "title"), data.get("title"), MODAL_TITLE_MAX, minimum=1, required=True
    )
    text_field(
        errors, (*path, "custom_id"), data.get("custom_id"), CUSTOM_ID_MAX, minimum=1, required=True
    )
    if data.get("components") is None:
        errors.add((*path, "components"), "BASE_TYPE_REQUIRED", "This field is required")
    rows = array_field(errors, (*path, "components"), data.get("components"), MODAL_ROWS_MAX, 1)
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = (*path, "components", index)
        row = action_row(errors, where, row)
        if row is None:
            continue
        inputs = array_field(errors, (*where, "components"), row.get("components"), 1, 1)
        for position, text_input in enumerate(inputs):
            spot = (*where, "components", position)
            text_input = object_field(errors, spot, text_input)
            if text_input is None:
                continue
            _text_input(text_input, errors, spot)
            unique_custom_id(text_input, seen, errors, spot)


def _text_input(text_input: dict[str, Any], errors: FormErrors, path: Path) -> None:
    if text_input.get("type") != TEXT_INPUT:
        errors.add((*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be 4.')
        return
    if text_input.get("style") not in TEXT_INPUT_STYLES:
        errors.add((*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2).")
    text_field(
        errors,
        (*path, "custom_id"),
        text_input.get("custom_id"),
        CUSTOM_ID_MAX,
        minimum=1,
        required=True,
    )
    text_field(
        errors,
        (*path, "label"),
        text_input.get("label"),
        TEXT_INPUT_LABEL_MAX,
        minimum=1,
        required=True,
    )
    text_field(
        errors, (*path, "placeholder"), text_input.get("placeholder"), TEXT_INPUT_PLACEHOLDER_MAX
    )
    text_field(errors, (*path, "value"), text_input.get("value"), TEXT_INPUT_VALUE_MAX)
    low = integer_field(
        errors, (*path, "min_length"), text_input.get("min_length"), 0, TEXT_INPUT_VALUE_MAX
    )
    high = integer_field(
        errors, (*path, "max_length"), text_input.get("max_length"), 1, TEXT_INPUT_VALUE_MAX
    )
    if low is not None and high is not None and low > high:
        errors.add(
            (*path, "min_length"), "BASE_TYPE_BAD_INT", "min_length must not exceed max_length."
        )
