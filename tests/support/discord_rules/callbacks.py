"""Interaction callbacks: which answer fits which interaction, autocomplete choices, modals
and their text inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .commands import _choice
from .components import _action_row, _unique_custom_id
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
from .fields import _array, _integer, _object, _objects, _required_array, _required_text, _text
from .messages import check_message, is_empty


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


def check_modal(data: Any, errors: FormErrors, path: Path) -> None:
    """A modal: title 1-45, custom id 1-100, 1-5 action rows each holding one text input."""
    data = _object(errors, path, data)
    if data is None:
        errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return
    _required_text(errors, path, data, "title", MODAL_TITLE_MAX)
    _required_text(errors, path, data, "custom_id", CUSTOM_ID_MAX)
    rows = _required_array(errors, path, data, "components", MODAL_ROWS_MAX)
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = (*path, "components", index)
        row = _action_row(errors, where, row)
        if row is None:
            continue
        inputs = _array(errors, (*where, "components"), row.get("components"), 1, 1)
        for spot, text_input in _objects(errors, (*where, "components"), inputs):
            _text_input(text_input, errors, spot)
            _unique_custom_id(text_input, seen, errors, spot)


def _text_input(text_input: dict[str, Any], errors: FormErrors, path: Path) -> None:
    if text_input.get("type") != TEXT_INPUT:
        errors.add((*path, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be 4.')
        return
    if text_input.get("style") not in TEXT_INPUT_STYLES:
        errors.add((*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2).")
    _required_text(errors, path, text_input, "custom_id", CUSTOM_ID_MAX)
    _required_text(errors, path, text_input, "label", TEXT_INPUT_LABEL_MAX)
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
