"""An announcement as JSON and back, so a recorded play can be delivered by a later run (or by
another process) without asking the station again: the embed is rendered from what was seen
when the play was detected."""

from __future__ import annotations

import dataclasses
import json
import types
from datetime import date, datetime, time, timedelta
from functools import cache
from typing import Any, Union, get_args, get_origin, get_type_hints

from ..station import Play, StationInfo
from ..storage.models import RequestCredit
from ..util.serialize import to_jsonable
from .watcher import Announcement


def dump(announcement: Announcement) -> str:
    return json.dumps(
        {
            "play": to_jsonable(announcement.play),
            "info": to_jsonable(announcement.info),
            "detected_at": announcement.detected_at,
            "on_air": announcement.on_air,
            "requested_by": to_jsonable(announcement.requested_by),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def load(payload: str) -> Announcement:
    """The announcement ``dump`` wrote; ValueError when the payload cannot be read."""
    try:
        data = json.loads(payload)
        return Announcement(
            play=_build(Play, data["play"]),
            info=_build(StationInfo, data["info"]),
            detected_at=float(data["detected_at"]),
            on_air=bool(data.get("on_air", True)),  # (payloads written before it was kept)
            requested_by=tuple(_build(RequestCredit, c) for c in data.get("requested_by") or ()),
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"unreadable announcement payload ({error})") from None


def dump_info(info: StationInfo) -> str:
    """Station info alone (what a fleet's poller shares for the others' commands)."""
    return json.dumps(to_jsonable(info), ensure_ascii=False, separators=(",", ":"))


def load_info(payload: str) -> StationInfo:
    try:
        info: StationInfo = _build(StationInfo, json.loads(payload))
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"unreadable station info payload ({error})") from None
    return info


def load_play(payload: str) -> Play:
    """Only the play of a payload (cheaper than :func:`load`)."""
    try:
        play: Play = _build(Play, json.loads(payload)["play"])
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"unreadable announcement payload ({error})") from None
    return play


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _build(cls: type, data: Any) -> Any:
    hints = _hints(cls)
    values = {
        f.name: _value(hints[f.name], data[f.name])
        for f in dataclasses.fields(cls)
        if f.init and f.name in data
    }
    return cls(**values)


def _value(kind: Any, raw: Any) -> Any:
    if raw is None:
        return None
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(kind) if a is not type(None)]
        return _value(options[0], raw)  # the models' unions are all "X | None"
    if origin is tuple:
        item = get_args(kind)[0]
        return tuple(_value(item, v) for v in raw)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _build(kind, raw)
    if kind is datetime:
        return datetime.fromisoformat(raw)
    if kind is date:
        return date.fromisoformat(raw)
    if kind is time:
        return time.fromisoformat(raw)
    if kind is timedelta:
        return timedelta(seconds=raw)
    return raw
