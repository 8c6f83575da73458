"""Message components: action rows, buttons and select menus, with unique custom ids."""

from __future__ import annotations

from typing import Any

from .constants import (
    ACTION_ROW,
    ACTION_ROWS_MAX,
    BUTTON,
    BUTTON_LABEL_MAX,
    BUTTON_SCHEMES,
    BUTTON_STYLES,
    BUTTON_URL_MAX,
    CUSTOM_ID_MAX,
    LINK_STYLE,
    PREMIUM_STYLE,
    ROW_WIDTH_MAX,
    SELECT_MENUS,
    SELECT_OPTION_TEXT_MAX,
    SELECT_OPTIONS_MAX,
    SELECT_PLACEHOLDER_MAX,
    SELECT_VALUES_MAX,
    STRING_SELECT,
)
from .errors import FormErrors, Path
from .fields import (
    _array,
    _integer,
    _object,
    _objects,
    _required_array,
    _required_text,
    _text,
    _url,
)


def check_components(value: Any, errors: FormErrors, path: Path) -> None:
    """Message components: action rows of buttons or one select menu; custom ids unique."""
    rows = _array(errors, path, value, ACTION_ROWS_MAX)
    seen: set[str] = set()
    for index, row in enumerate(rows):
        where = (*path, index)
        row = _action_row(errors, where, row)
        if row is None:
            continue
        children = _required_array(errors, where, row, "components", ROW_WIDTH_MAX)
        selects = [c for c in children if isinstance(c, dict) and c.get("type") in SELECT_MENUS]
        if selects and len(children) > 1:
            errors.add(
                (*where, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for spot, child in _objects(errors, (*where, "components"), children):
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
    _required_text(errors, path, select, "custom_id", CUSTOM_ID_MAX)
    _text(errors, (*path, "placeholder"), select.get("placeholder"), SELECT_PLACEHOLDER_MAX)
    _integer(errors, (*path, "min_values"), select.get("min_values"), 0, SELECT_VALUES_MAX)
    _integer(errors, (*path, "max_values"), select.get("max_values"), 1, SELECT_VALUES_MAX)
    if select.get("type") != STRING_SELECT:
        return
    options = _required_array(errors, path, select, "options", SELECT_OPTIONS_MAX)
    values: set[str] = set()
    for where, option in _objects(errors, (*path, "options"), options):
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
            _required_text(errors, where, option, key, SELECT_OPTION_TEXT_MAX)
        _text(errors, (*where, "description"), option.get("description"), SELECT_OPTION_TEXT_MAX)
