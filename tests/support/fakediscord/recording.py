"""Each REST request as the fake records it (body and uploads), and its line in the
discord-look input file that ``ONAIR_FAKE_DISCORD_RECORD`` names.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
from typing import Any

from aiohttp import BodyPartReader, web

from .objects import RECORD_ENV, Recorded
from .state import FakeDiscordState
from .wire import CALLBACK


class Recording(FakeDiscordState):
    """Reads requests into ``Recorded`` and writes them out."""

    async def _record(self, request: web.Request) -> Recorded:
        record = Recorded(
            request.method,
            request.path,
            dict(request.query),
            dict(request.headers),
            at=time.monotonic(),
            wall=time.time(),
        )
        content_type = request.headers.get("Content-Type", "")
        if content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                if not isinstance(part, BodyPartReader):
                    continue  # Discord's bodies are flat: no nested multipart
                if part.name == "payload_json":
                    record.json = json.loads(await part.text())
                else:
                    record.files.append(
                        (part.name or "", part.filename or "", bytes(await part.read()))
                    )
        elif request.can_read_body:
            raw = await request.read()
            if raw:
                try:
                    record.json = json.loads(raw)
                except ValueError:
                    record.json = raw.decode(errors="replace")
        return record

    def _write_record(self, r: Recorded) -> None:
        target = os.environ.get(RECORD_ENV)
        if not target:
            return
        line: dict[str, Any] = {
            "method": r.method,
            "path": r.path,
            "json": r.json,
            "at": r.wall,
            "status": r.status,
        }
        if r.files:
            line["files"] = [
                {"filename": name, "base64": base64.b64encode(data).decode()}
                for _, name, data in r.files
            ]
        token = re.match(r"^/(?:interactions/\d+|webhooks/\d+)/itoken-(\d+)", r.route)
        callback = CALLBACK.match(r.route)
        interaction = self.interactions.get(
            callback.group(1) if callback else token.group(1) if token else ""
        )
        if interaction is not None:
            line["user"] = interaction.user
            if interaction.command:
                line["command"] = interaction.command
        created = r.response if isinstance(r.response, dict) else {}
        created = created.get("resource", {}).get("message") or created
        if r.method == "POST" and 200 <= r.status < 300 and created.get("id"):
            line["response_id"] = str(created["id"])
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
