"""Record what a listener sees: every command and both announcement modes, as discord-look JSONL.

Runs the real bot against the fake Discord and the station simulator (nothing leaves loopback),
drives each listener command and both announcement modes, and writes the recorded requests in
the input shape of ``shared/tools/discord-look`` (one JSON object a line), one file per scene.
``scripts/screens`` renders them to PNG with discord-look when it is installed.

    .venv/bin/python -m tests.support.screens OUT_DIR

The scenes live in one module per group (``screens_listeners``, ``screens_announcements``,
``screens_voice``, ``screens_shows``, ``screens_community``, ...) over ``screens_record``, which
writes them.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from .screens_announcements import announcement_scenes
from .screens_azuracast import azuracast
from .screens_community import community
from .screens_hosts_face import hosts_face
from .screens_i18n import i18n
from .screens_i18n_admin import i18n_admin
from .screens_i18n_admin_replies import i18n_preview, i18n_voice
from .screens_i18n_errors import i18n_errors
from .screens_i18n_listeners import i18n_listeners
from .screens_i18n_stats import i18n_stats
from .screens_icecast import icecast_scenes
from .screens_links import links
from .screens_listeners import listener_scenes, stale_scenes
from .screens_messages import messages
from .screens_permissions import permissions
from .screens_post_messages import post_messages
from .screens_requests import requests
from .screens_requests_crowd import requests_crowd
from .screens_shoutcast import shoutcast
from .screens_shows import scheduled_scenes, show_scenes
from .screens_song_links import song_links
from .screens_user_install import user_install
from .screens_voice import voice_scenes
from .screens_votes import votes

SCENES = {
    "listener": listener_scenes,
    "stale": stale_scenes,
    "announcements": announcement_scenes,
    "voice": voice_scenes,
    "shows": show_scenes,
    "scheduled": scheduled_scenes,
    "community": community,
    "requests": requests,
    "requests_crowd": requests_crowd,
    "links": links,
    "i18n": i18n,
    "i18n_listeners": i18n_listeners,
    "i18n_stats": i18n_stats,
    "i18n_voice": i18n_voice,
    "i18n_preview": i18n_preview,
    "i18n_admin": i18n_admin,
    "permissions": permissions,
    "messages": messages,
    "i18n_errors": i18n_errors,
    "post_messages": post_messages,
    "user_install": user_install,
    "votes": votes,
    "hosts_face": hosts_face,
    "azuracast": azuracast,
    "icecast": icecast_scenes,
    "song_links": song_links,
    "shoutcast": shoutcast,
}


async def main(out: Path, groups: list[str]) -> None:
    for name in groups or list(SCENES):
        await SCENES[name](out)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screens/jsonl")
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target, sys.argv[2:]))
