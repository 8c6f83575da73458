"""The private form a guild admin types a station's API key into."""

from __future__ import annotations

from typing import Any

import discord

from ..catalog.onboarding import StationOnboarding, StationRequest
from ..errors import NEED_MANAGE, NOT_YOUR_FORM
from ..runtime.core import report_error
from ..util.i18n import ENGLISH, Lang
from .checks import can_manage
from .stations import reader_lang


class StationKeyModal(discord.ui.Modal, title="Station API key"):
    """The key is typed here, never in a visible command option, and never shown again.

    The custom id is discord.py's random default (a fixed one would let two guilds' pending
    forms for the same name replace each other), and only the user who opened the form, in the
    guild they opened it in, can submit it; Manage Server is checked again on submit.
    """

    # Made per form, in the admin's language (Discord allows 45 characters in a label and 100
    # in a placeholder; every translation fits, the fake Discord refuses what does not).
    key: discord.ui.TextInput[Any]

    def __init__(
        self,
        onboarding: StationOnboarding,
        request: StationRequest,
        *,
        user_id: int,
        lang: Lang = ENGLISH,
    ) -> None:
        super().__init__(title=lang.t("Station API key"), timeout=600)
        self.key = discord.ui.TextInput(
            label=lang.t("API key"),
            placeholder=lang.t("Leave empty if the station needs no key"),
            required=False,
            max_length=200,
            style=discord.TextStyle.short,
        )
        self.add_item(self.key)
        self.onboarding = onboarding
        self.request = request
        self.user_id = user_id

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        """Refuse (privately) a submit by anyone else, from elsewhere, or without Manage Server."""
        refusal = None
        if interaction.user.id != self.user_id or interaction.guild_id != self.request.guild_id:
            refusal = NOT_YOUR_FORM
        elif not can_manage(interaction):
            refusal = NEED_MANAGE
        if refusal is None:
            return True
        text = reader_lang(interaction).t(refusal)
        await interaction.response.send_message(text, ephemeral=True)
        return False

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        key = self.key.value.strip()
        message = await self.onboarding.add(self.request, key, reader_lang(interaction))
        await interaction.followup.send(message, ephemeral=True)

    async def on_error(self, interaction: discord.Interaction[Any], error: Exception) -> None:  # type: ignore[override]
        await report_error(interaction, error)
