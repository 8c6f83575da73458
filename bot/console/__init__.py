"""The terminal side of OnAir: ``onair watch`` and ``onair demo`` (``modes``), the plain-text
station summary of ``onair check`` (``summary``). Models as JSON are ``bot.util.serialize``.

Imports nothing itself."""
