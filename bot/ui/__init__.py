"""Reusable Discord UI pieces: replies that defer when slow, and the button paginator."""

from .paginator import Paginator
from .reply import Reply, answer, send_reply

__all__ = ["Paginator", "Reply", "answer", "send_reply"]
