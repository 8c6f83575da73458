"""Logging with a redaction filter on the root handlers: keys and tokens never reach a log."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from ..station.redact import redact


class RedactingFilter(logging.Filter):
    """Rewrites every record's message with ``key=`` values and known secrets masked."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets if s and len(s) >= 4)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, *self.secrets)
        if record.exc_info and record.exc_info[1] is not None:
            formatted = logging.Formatter().formatException(record.exc_info)
            cleaned_exc = redact(formatted, *self.secrets)
            if cleaned_exc != formatted:
                record.exc_info = None
                cleaned = f"{cleaned}\n{cleaned_exc}"
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def setup_logging(level: str = "INFO", *, secrets: Iterable[str | None] = ()) -> RedactingFilter:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    redacting = RedactingFilter(secrets)
    handler.addFilter(redacting)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("discord").setLevel(max(logging.INFO, logging.getLevelName(level)))
    # aiosqlite logs every statement with its parameters at DEBUG: a guild's stream address
    # (it may carry a listener token) among them.
    logging.getLogger("aiosqlite").setLevel(max(logging.INFO, logging.getLevelName(level)))
    # APScheduler says "Added job", "Running job" and "executed successfully" at INFO for every
    # station poll (three lines each, all day): nothing an owner acts on. Shown at DEBUG only.
    debug = logging.getLevelName(level) <= logging.DEBUG
    logging.getLogger("apscheduler").setLevel(logging.DEBUG if debug else logging.WARNING)
    return redacting


class ModalContentFilter(logging.Filter):
    """discord.py logs every gateway event at DEBUG, modal submissions included, and those
    carry what users typed (a station key); so does ``/onair voice stream_url`` (a stream
    address may carry a listener token). Such records keep their event name only."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "INTERACTION_CREATE" not in message:
            return True
        if "'type': 5," in message:
            record.msg = "WebSocket Event: INTERACTION_CREATE (modal submission; contents withheld)"
            record.args = None
        elif "'stream_url'" in message:
            record.msg = "WebSocket Event: INTERACTION_CREATE (a stream address; contents withheld)"
            record.args = None
        return True


# discord.py logs voice frames at DEBUG as they are: IDENTIFY/RESUME carry the voice server
# token, VOICE_SERVER_UPDATE the same token, SESSION_DESCRIPTION the session's secret key.
_VOICE_SECRETS = re.compile(
    r"""(?P<name>['"](?:token|secret_key)['"]\s*:\s*)(?:'[^']*'|"[^"]*"|\[[^\]]*\]|b'[^']*')"""
)


class VoiceSecretFilter(logging.Filter):
    """Withholds voice server tokens and voice session keys from discord.py's DEBUG frames."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _VOICE_SECRETS.sub(r"\g<name>'[withheld]'", message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class LoginLineFilter(logging.Filter):
    """discord.py says "logging in using static token" at INFO on every login attempt: while
    Discord is unreachable that is a second line per retry beside OnAir's own one. Kept at
    DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() != "logging in using static token":
            return True
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def guard_discord_logs() -> None:
    """Attach the modal, voice-secret and login-line filters to discord.py's loggers once (a
    logger-level filter applies whatever handlers the application or a test installs)."""
    client = logging.getLogger("discord.client")
    if not any(isinstance(f, LoginLineFilter) for f in client.filters):
        client.addFilter(LoginLineFilter())
    gateway = logging.getLogger("discord.gateway")
    if not any(isinstance(f, ModalContentFilter) for f in gateway.filters):
        gateway.addFilter(ModalContentFilter())
    for name in ("discord.gateway", "discord.voice_state", "discord.voice_client"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, VoiceSecretFilter) for f in logger.filters):
            logger.addFilter(VoiceSecretFilter())


class _RateLimitCounter(logging.Filter):
    def __init__(self, metrics: Any) -> None:
        super().__init__()
        self.metrics = metrics

    def filter(self, record: logging.LogRecord) -> bool:
        if "rate limited" in str(record.msg).lower():
            self.metrics.inc("discord_429_total")
        return True


def count_discord_429s(metrics: Any) -> None:
    """discord.py logs each 429 it handles; count them for the metrics endpoint (once per
    metrics: ``onair run`` builds a fresh bot on each retry, on the same metrics)."""
    http = logging.getLogger("discord.http")
    if not any(isinstance(f, _RateLimitCounter) and f.metrics is metrics for f in http.filters):
        http.addFilter(_RateLimitCounter(metrics))
