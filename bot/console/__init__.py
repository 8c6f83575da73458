"""The terminal side of OnAir: ``onair watch`` and ``onair demo`` (``modes``), the plain-text
station summary of ``onair check`` (``summary``), and models as JSON (``serialize``).

Imports nothing itself, so the announcer can use ``serialize`` without loading the modes."""
