"""Shows outside messages: the voice channel status (or stage topic) and live-show events."""

from .events import may_make_events

__all__ = ["may_make_events"]
