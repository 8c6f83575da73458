"""The ❤ answer and the voice channel status in de and pt-BR, as the Discord client shows
them: a post of a guild whose Discord is in the language with a listener's ❤ click answered in
theirs, and the voice channel status of a live show in the guild's language.

    .venv/bin/python -m tests.support.screens_i18n_likes_and_status OUT_DIR [DISCORD_LOOK]

writes ``like-<tag>.jsonl`` (drawn by discord-look like every scene) and
``voice-status-<tag>.html`` (a channel list, which discord-look does not draw: its
``screenshot`` takes the page with the same offline headless chromium; see docs/commands.md).
The status text is :func:`bot.shows.text.voice_status` in the guild's language, the function
the bot writes the status with (tests/test_i18n_voice_status.py checks the bot sends it).
"""

from __future__ import annotations

import asyncio
import html
import subprocess
import sys
from pathlib import Path

from bot.shows.text import voice_status
from bot.simulator import LIVE_SHOW, TRACKS, StationSimulator
from bot.station import Play
from bot.util.i18n import Translator

from .botenv import STATION_KEY, running_bot, subscription_config
from .fakediscord import FakeDiscord, Recorded
from .screens_record import BERLIN, write_scene

LOCALES = (("de", "de", "de"), ("pt-BR", "pt-br", "pt_BR"))  # Discord locale, file tag, catalog


async def likes(out: Path) -> None:
    """Each guild's Discord is in one language; its listener clicks ❤ on the post."""
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    await sim.start()
    fake = FakeDiscord(guild_count=2)
    for guild, (locale, _, _) in zip(fake.guilds, LOCALES, strict=True):
        guild.preferred_locale = locale
    await fake.start()
    config = "".join(subscription_config(g.id, g.channels[0]) for g in fake.guilds)
    try:
        async with running_bot(sim, fake=fake, extra_config=config):
            for index, (guild, (locale, tag, _)) in enumerate(
                zip(fake.guilds, LOCALES, strict=True)
            ):
                channel = guild.channels[0]

                def posts(channel: int = channel) -> list[Recorded]:
                    found = fake.sent("POST", rf"^/channels/{channel}/messages$")
                    return [r for r in found if r.status == 200]

                def posted(channel: int = channel) -> bool:
                    return bool(posts(channel))

                await fake.wait_for(posted)
                post = posts()[0]
                since = fake.requests.index(post)
                message = fake.messages[int(post.response["id"])]
                button = next(
                    b
                    for row in message["components"]
                    for b in row["components"]
                    if b.get("custom_id", "").startswith("onair:like:")
                )
                for user in (901 + index, 911 + index):
                    fake.user_locales[user] = locale
                    await fake.response(
                        await fake.click(message, button["custom_id"], user_id=user, guild=guild)
                    )
                _write_scene(fake, out / f"like-{tag}.jsonl", since, channel)
    finally:
        await fake.stop()
        await sim.stop()


def _write_scene(fake: FakeDiscord, path: Path, since: int, channel: int) -> None:
    """The post and the last listener's answer (the other guild's requests left out)."""
    write_scene(fake, path, since, {})
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = [x for x in lines if f"/channels/{channel}/messages" in x or "/interactions/" in x]
    path.write_text("\n".join(keep[:1] + keep[-1:]) + "\n", encoding="utf-8")


SIDEBAR = """<!doctype html><meta charset="utf-8"><style>
body{{margin:0;background:#2b2d31;font:15px/1.3 "gg sans","Noto Sans","Liberation Sans",sans-serif;
color:#949ba4;padding:12px 8px}}
.cat{{font-size:12px;font-weight:600;text-transform:uppercase;letter-spacing:.02em;margin:8px 8px}}
.ch{{display:flex;align-items:center;gap:6px;padding:6px 8px;border-radius:4px}}
.ch.on{{background:#404249;color:#f2f3f5}}
.st{{font-size:12px;color:#b5bac1;margin:-2px 8px 4px 32px;white-space:nowrap;overflow:hidden;
text-overflow:ellipsis}}
.user{{display:flex;align-items:center;gap:8px;margin:4px 8px 4px 32px;color:#dbdee1}}
.av{{width:22px;height:22px;border-radius:50%;background:#5865f2;color:#fff;font-size:11px;
display:flex;align-items:center;justify-content:center}}
.bot{{background:#23a559}}.tag{{font-size:10px;background:#5865f2;color:#fff;border-radius:3px;
padding:0 4px}}
discord-messages{{display:block;background:#2b2d31;padding-bottom:8px}}
</style>
<script>window.__ready = true</script>
<discord-messages>
<div class="cat">{category}</div>
<div class="ch on">🔊 Radio</div>
<div class="st">{status}</div>
<div class="user"><span class="av bot">On</span>OnAir <span class="tag">APP</span></div>
<div class="user"><span class="av">L</span>{listener}</div>
<div class="ch">🔊 Lounge</div>
<div class="st">{music}</div>
<div class="user"><span class="av bot">On</span>OnAir <span class="tag">APP</span></div>
</discord-messages>
"""
WORDS = {"de": ("Sprachkanäle", "Hörer"), "pt_BR": ("Canais de voz", "ouvinte")}


def voice_status_pages(out: Path) -> None:
    """The channel list of a guild in each language: the live show's status, and a track's."""
    translator = Translator.load()
    live = Play(title=LIVE_SHOW.title, artist=LIVE_SHOW.artist, live=True)
    track = Play(title=TRACKS[0].title, artist=TRACKS[0].artist)
    for _, tag, code in LOCALES:
        lang = translator.lang(code)
        category, listener = WORDS[code]
        page = SIDEBAR.format(
            category=category,
            listener=listener,
            status=html.escape(voice_status(live, lang) or ""),
            music=html.escape(voice_status(track, lang) or ""),
        )
        (out / f"voice-status-{tag}.html").write_text(page, encoding="utf-8")


def draw(out: Path, look: Path) -> None:
    """PNGs at desktop width and at 400 px (``phone/``): the scenes by discord-look, the
    channel lists by its ``screenshot`` (offline chromium), cut to the list's height."""
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader

    from PIL import Image

    loader = SourceFileLoader("discord_look", str(look))
    spec = spec_from_loader("discord_look", loader)
    assert spec is not None
    tool = module_from_spec(spec)
    loader.exec_module(tool)
    (out / "phone").mkdir(exist_ok=True)
    for width, where in ((760, out), (400, out / "phone")):
        for scene in sorted(out.glob("like-*.jsonl")):
            png = where / f"{scene.stem}.png"
            flags = ["--tz", "Europe/Berlin", "--24h", "--no-captions", "--width", str(width)]
            subprocess.run([str(look), str(scene), "--out", str(png), *flags], check=True)
            png.with_suffix(".html").unlink(missing_ok=True)
        for page in sorted(out.glob("voice-status-*.html")):
            png = where / f"{page.stem}.png"
            tool.screenshot(page, png, width, 2, False)
            image = Image.open(png).convert("RGB")
            ground = image.getpixel((image.width - 1, image.height - 1))
            used = [
                y
                for y in range(image.height)
                if any(image.getpixel((x, y)) != ground for x in range(0, image.width, 4))
            ]
            image.crop((0, 0, image.width, min(image.height, used[-1] + 24))).save(png)


async def main(out: Path) -> None:
    await likes(out)
    voice_status_pages(out)


if __name__ == "__main__":
    Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)
    asyncio.run(main(Path(sys.argv[1])))
    if len(sys.argv) > 2:
        draw(Path(sys.argv[1]), Path(sys.argv[2]))
