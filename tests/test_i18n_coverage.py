"""No new user-facing English literal (issue 24, point 1): a scan of the code's syntax tree for
words written straight into what Discord shows (an embed, a field, a reply, a button, a select,
a modal, an autocomplete choice) or into an error a user reads, without t()/tn()/N_(). A new
untranslated string fails here; the allow-list below says why each exception stays."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where text a listener or an admin reads is written.
SCANNED = (
    "bot/render",
    "bot/ui",
    "bot/delivery",
    "bot/scheduled",
    "bot/shows",
    "bot/errors.py",
    "bot/voice",
    "bot/inputs",
    "bot/guard",
    "bot/templates",
    "bot/announcer/templating.py",
    "bot/requests",
    "cogs",
)
# Calls whose text Discord shows, and the keyword arguments that carry it.
SHOWN = {
    "Embed": {"title", "description"},
    "EmbedBuilder": {"title", "description"},
    "add_field": {"name", "value"},
    "field": {"name", "value"},
    "set_footer": {"text"},
    "set_author": {"name"},
    "send": {"content"},
    "send_message": {"content"},
    "edit": {"content"},
    "edit_message": {"content"},
    "edit_original_response": {"content"},
    "Reply": {"content"},
    "Button": {"label"},
    "button": {"label"},
    "SelectOption": {"label", "description"},
    "Select": {"placeholder"},
    "Modal": {"title"},
    "TextInput": {"label", "placeholder"},
    "Choice": {"name"},
}
# Errors whose first argument is the English msgid said in the reader's language.
SAID = {"BadInput", "VoiceRefused", "OnAirError", "UnknownStation", "UrlRefused", "Note", "Reason"}
SAID |= {"TemplateError", "UnsafeStreamUrl", "StreamUnreachable"}
# (file, text) that stay as they are, and why.
ALLOWED = {
    # The decorator's first label: _label() replaces it in the reader's language before the
    # view is sent (test_i18n_listeners checks the sent label).
    ("bot/ui/playlist.py", "Show jingles"),
}
_WORDS = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")  # two words at least: English prose


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _literal(node: ast.AST) -> str | None:
    """The words of a string literal or an f-string (its constant parts), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def untranslated(source: str) -> list[tuple[int, str]]:
    """(line, text) of every English literal shown or said as it is in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node)
        shown = [k.value for k in node.keywords if k.arg in SHOWN.get(name, ())]
        if name in SAID and node.args:
            shown.append(node.args[0])
        if name in {"send", "send_message", "edit_message", "Reply"} and node.args:
            shown.append(node.args[0])
        for value in shown:
            text = _literal(value)
            if text is not None and _WORDS.search(text):
                found.append((node.lineno, text))
    return found


def _files() -> list[Path]:
    files: list[Path] = []
    for place in SCANNED:
        path = ROOT / place
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def test_the_scan_finds_english_and_lets_translated_text_be():
    source = """
embed = discord.Embed(title="Now playing", description=lang.t("Up next"))
embed.add_field(name=lang.t("Listeners"), value=f"{n} listening now")
await interaction.response.send_message("Please wait a moment.", ephemeral=True)
raise BadInput(N_("Pick a channel first."))
raise BadInput("Pick a channel first.")
Choice(name="none (no home)", value="none")
button = Button(label="▶", custom_id="x")
"""
    assert sorted(text for _, text in untranslated(source)) == sorted(
        [
            "Now playing",
            " listening now",
            "Please wait a moment.",
            "Pick a channel first.",
            "none (no home)",
        ]
    )


def test_no_user_facing_english_is_left_untranslated():
    left = []
    for path in _files():
        relative = path.relative_to(ROOT).as_posix()
        for line, text in untranslated(path.read_text(encoding="utf-8")):
            if (relative, text) not in ALLOWED:
                left.append(f"{relative}:{line}: {text!r}")
    assert left == [], "wrap these in t()/tn()/N_() (or allow them here, with a reason)"


def test_the_allow_list_is_still_needed():
    """An entry whose text is gone (or now translated) is removed, so the list stays short."""
    for relative, text in ALLOWED:
        found = {t for _, t in untranslated((ROOT / relative).read_text(encoding="utf-8"))}
        assert text in found, (relative, text)
