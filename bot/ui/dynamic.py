"""What the persistent buttons and menus share: each carries what it acts on in its custom id, so
it is rebuilt from that id after a restart (in whichever process of a fleet gets the click), and
a failed click gets the command layer's one error reply."""

from __future__ import annotations

import re
from typing import Any, Self


class Persistent:
    """Mixed in before ``discord.ui.DynamicItem``: a subclass says how to rebuild itself from its
    custom id (:meth:`rebuild`) and what a click does (:meth:`act`)."""

    @classmethod
    def rebuild(cls, match: re.Match[str], item: Any) -> Self:
        """The item again, from its custom id's ``match`` (``item``: the component clicked)."""
        raise NotImplementedError

    @classmethod
    async def from_custom_id(cls, interaction: Any, item: Any, match: re.Match[str]) -> Self:
        return cls.rebuild(match, item)

    async def act(self, interaction: Any) -> None:
        """What a click does; whatever it raises is answered as a command's error is."""
        raise NotImplementedError

    async def callback(self, interaction: Any) -> None:
        from ..runtime.core import report_error  # the command layer's one error reply

        try:
            await self.act(interaction)
        except Exception as error:
            await report_error(interaction, error)
