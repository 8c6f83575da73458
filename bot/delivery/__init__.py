"""What the bot posts on its own, through discord.py: announcements (``announcements.py``, the
announcer's ``Deliverer``) and scheduled posts (``scheduled.py``, the ``PostSender`` of alerts
and the recap). Both are handed to their service by the composition root (``bot.app``), so the
services below import no Discord UI."""
