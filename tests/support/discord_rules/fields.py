"""Checks of one field each (string, array, object, integer, URI, snowflake, timestamp), with
the error codes and messages Discord gives for them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from ..discord_uri import uri_scheme
from .constants import URL_MAX
from .errors import FormErrors, Path


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


def _iso8601(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _required_text(
    errors: FormErrors, path: Path, item: Mapping[str, Any], key: str, maximum: int
) -> int:
    """``item[key]``: a required string of 1 to ``maximum`` characters; returns its length."""
    return _text(errors, (*path, key), item.get(key), maximum, minimum=1, required=True)


def _required_array(
    errors: FormErrors, path: Path, item: Mapping[str, Any], key: str, maximum: int
) -> list[Any]:
    """``item[key]``: a required array of 1 to ``maximum`` items."""
    if item.get(key) is None:
        errors.add((*path, key), "BASE_TYPE_REQUIRED", "This field is required")
    return _array(errors, (*path, key), item.get(key), maximum, 1)


def _objects(
    errors: FormErrors, path: Path, items: list[Any]
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The objects of an array, each with its path; any other item is an error, and skipped."""
    for index, item in enumerate(items):
        where = (*path, index)
        found = _object(errors, where, item)
        if found is not None:
            yield where, found
