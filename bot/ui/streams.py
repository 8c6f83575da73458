"""/listen's "More streams" menu: choosing a stream gives the chooser its link, privately.

The menu is a dynamic item (the station is in its custom id), so it works after a restart; the
link is looked up again when chosen, so a changed link is never handed out stale.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import discord

from .. import errors
from ..errors import OnAirError
from ..render.embeds import link_view
from ..render.station_embeds import MORE_STREAMS, StreamChoice, more_streams
from ..util.text import bare_link, safe
from .dynamic import Persistent
from .reply import Reply, answer
from .stations import registry_of, resolve_station

if TYPE_CHECKING:
    from ..runtime.core import OnAirBot

STREAMS_PREFIX = "onair:streams:"
PLACEHOLDER = "More streams"
MENU_ROW = 1  # under the Listen and Web player buttons


class MoreStreams(
    Persistent,
    discord.ui.DynamicItem[discord.ui.Select[Any]],
    template=re.compile(re.escape(STREAMS_PREFIX) + r"(?P<station>[a-z0-9_-]{1,80})"),
):
    """A string select of the station's other streams (labels and values from
    :func:`more_streams`)."""

    def __init__(self, station: str, choices: Sequence[StreamChoice] = ()) -> None:
        options = [
            discord.SelectOption(label=c.label, value=c.value, description=c.description)
            for c in choices[:MORE_STREAMS]
        ]
        super().__init__(
            discord.ui.Select(
                custom_id=f"{STREAMS_PREFIX}{station}",
                placeholder=PLACEHOLDER,
                options=options,
                row=MENU_ROW,
            )
        )
        self.station = station

    @classmethod
    def rebuild(cls, match: re.Match[str], item: Any) -> MoreStreams:
        return cls(match["station"])

    async def act(self, interaction: discord.Interaction[Any]) -> None:
        await give_stream(interaction, self.station, self.item.values)


async def give_stream(
    interaction: discord.Interaction[OnAirBot], station: str, values: Sequence[str]
) -> None:
    """Answer a choice privately: what the stream is for, a button to open it, and the address
    to copy into a player (in ``<…>``: Discord shows no preview of it)."""
    chosen = resolve_station(interaction, station)  # still visible in this server?

    async def work() -> Reply:
        snapshot = await registry_of(interaction).snapshot(chosen)
        choice = next((c for c in more_streams(snapshot.info.links) if c.value in values), None)
        if choice is None:
            raise OnAirError(errors.STREAM_GONE)
        name = safe(chosen.name, limit=80)
        label, about = safe(choice.label, limit=100), safe(choice.description, limit=100)
        content = f"**{label}** · {name}\n{about}."
        address = bare_link(choice.url)
        if address is not None:
            content += f"\nOr copy this address into your player: {address}"
        return Reply(content=content, view=link_view([("Open", choice.url)]), ephemeral=True)

    await answer(interaction, work(), ephemeral=True)


def with_more_streams(
    view: discord.ui.View | None, station: str, choices: Sequence[StreamChoice]
) -> discord.ui.View | None:
    """``view`` with the "More streams" menu on its own row when there is anything to offer."""
    if not choices:
        return view
    view = view or discord.ui.View(timeout=None)
    view.add_item(MoreStreams(station, choices))
    return view
