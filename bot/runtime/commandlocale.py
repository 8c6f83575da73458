"""Command descriptions and choice names in each language, given to Discord at sync.

discord.py asks :class:`CommandLocales` for every string of the command tree and each Discord
locale; command, group and option *names* stay English (a listener types them and help refers
to them), everything else comes from the catalogs. A string missing from a catalog is left out
(Discord shows the English), and so is any translation past Discord's limit for its place, so a
sync never fails on a long translation.
"""

from __future__ import annotations

import discord
from discord import app_commands

from ..util.i18n import DISCORD_LOCALES, Translator

Location = app_commands.TranslationContextLocation
_NAMES = {Location.command_name, Location.group_name, Location.parameter_name}
DESCRIPTION_MAX = 100  # command, group and option descriptions, and choice names: 1-100


class CommandLocales(app_commands.Translator):
    def __init__(self, translator: Translator) -> None:
        self.translator = translator

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if context.location in _NAMES or locale.value not in DISCORD_LOCALES:
            return None
        lang = self.translator.lang(locale.value)
        text = lang.t(string.message)
        if text == string.message or not 1 <= len(text) <= DESCRIPTION_MAX:
            return None
        return text
