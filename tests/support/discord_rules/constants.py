"""Discord's numbers the rules use: interaction and callback types, component types and button
styles, message flags, command and option types, and the documented limits.
"""

from __future__ import annotations

PING = 1
APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
AUTOCOMPLETE = 4
MODAL_SUBMIT = 5

PONG = 1
CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
AUTOCOMPLETE_RESULT = 8
MODAL = 9
LAUNCH_ACTIVITY = 12

ALLOWED_CALLBACKS: dict[int, frozenset[int]] = {
    PING: frozenset({PONG}),
    APPLICATION_COMMAND: frozenset(
        {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, MODAL, LAUNCH_ACTIVITY}
    ),
    MESSAGE_COMPONENT: frozenset(
        {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE, MODAL}
    ),
    AUTOCOMPLETE: frozenset({AUTOCOMPLETE_RESULT}),
    MODAL_SUBMIT: frozenset(
        {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE}
    ),
}

ACTION_ROW = 1
BUTTON = 2
STRING_SELECT = 3
TEXT_INPUT = 4
SELECT_MENUS = frozenset({3, 5, 6, 7, 8})  # string, user, role, mentionable, channel
BUTTON_STYLES = frozenset({1, 2, 3, 4, 5, 6})
LINK_STYLE = 5
PREMIUM_STYLE = 6
TEXT_INPUT_STYLES = frozenset({1, 2})

SUPPRESS_EMBEDS = 1 << 2
EPHEMERAL = 1 << 6
SUPPRESS_NOTIFICATIONS = 1 << 12
IS_COMPONENTS_V2 = 1 << 15

CHAT_INPUT = 1
USER_COMMAND = 2
MESSAGE_COMMAND = 3
SUB_COMMAND = 1
SUB_COMMAND_GROUP = 2
STRING_OPTION = 3
OPTION_TYPES = frozenset(range(1, 12))

CONTENT_MAX = 2000
UPLOAD_MAX = 10 * 1024 * 1024  # bytes of files in one request (a server without boosts)
EMBEDS_MAX = 10
EMBED_TOTAL_MAX = 6000
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELDS_MAX = 25
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_TEXT_MAX = 2048
AUTHOR_NAME_MAX = 256
URL_MAX = 2048
ACTION_ROWS_MAX = 5
ROW_WIDTH_MAX = 5
BUTTON_LABEL_MAX = 80
BUTTON_URL_MAX = 512
BUTTON_SCHEMES = ("http", "https", "discord")
CUSTOM_ID_MAX = 100
SELECT_OPTIONS_MAX = 25
SELECT_OPTION_TEXT_MAX = 100
SELECT_PLACEHOLDER_MAX = 150
SELECT_VALUES_MAX = 25
MODAL_TITLE_MAX = 45
MODAL_ROWS_MAX = 5
TEXT_INPUT_LABEL_MAX = 45
TEXT_INPUT_PLACEHOLDER_MAX = 100
TEXT_INPUT_VALUE_MAX = 4000
CHOICES_MAX = 25
CHOICE_NAME_MAX = 100
CHOICE_STRING_VALUE_MAX = 100
COMMAND_NAME_MAX = 32
COMMAND_DESCRIPTION_MAX = 100
COMMAND_OPTIONS_MAX = 25
# Names, descriptions and values of a command with all its options and choices, each field
# counted at its longest localization (Discord's docs: 8,000 since 2025, 4,000 before).
COMMAND_TOTAL_MAX = 8000
STRING_OPTION_LENGTH_MAX = 6000
CHAT_INPUT_COMMANDS_MAX = 100
CONTEXT_COMMANDS_MAX = 15  # each of user and message commands
MENTION_IDS_MAX = 100
# Discord's locales (AvailableLocalesEnum in its OpenAPI description): the only keys a
# name_localizations or description_localizations object may hold, 34 at most.
LOCALES = frozenset(
    {
        *("ar", "bg", "cs", "da", "de", "el", "en-GB", "en-US", "es-419", "es-ES", "fi", "fr"),
        *("he", "hi", "hr", "hu", "id", "it", "ja", "ko", "lt", "nl", "no", "pl", "pt-BR"),
        *("ro", "ru", "sv-SE", "th", "tr", "uk", "vi", "zh-CN", "zh-TW"),
    }
)
MENTION_PARSE = frozenset({"roles", "users", "everyone"})
NAME_PUNCTUATION = frozenset("-_'")
DEVANAGARI = ((0x0900, 0x097F), (0xA8E0, 0xA8FF), (0x11B00, 0x11B5F))
THAI = ((0x0E00, 0x0E7F),)

# Installation contexts (``integration_types``) and interaction contexts (``contexts``).
GUILD_INSTALL = 0
USER_INSTALL = 1
INTEGRATION_TYPES = (GUILD_INSTALL, USER_INSTALL)
GUILD_CONTEXT = 0
BOT_DM = 1
PRIVATE_CHANNEL = 2
INTERACTION_CONTEXTS = (GUILD_CONTEXT, BOT_DM, PRIVATE_CHANNEL)
# What ``app_permissions`` holds where a user-installed app has no member: ATTACH_FILES,
# EMBED_LINKS and MENTION_EVERYONE in (group) DMs of others, USE_EXTERNAL_EMOJIS besides in a
# DM with the app's bot (Discord's interaction docs).
PRIVATE_APP_PERMISSIONS = (1 << 15) | (1 << 14) | (1 << 17)
BOT_DM_APP_PERMISSIONS = PRIVATE_APP_PERMISSIONS | (1 << 18)
