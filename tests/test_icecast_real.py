"""The test for kind icecast against the REAL server: Debian's Icecast 2.4.4 on a loopback port
with a generated config, FFmpeg pushing a tone to /live as its source, titles changed through
the admin interface. OnAir's icecast source sees each title once, from the ICY stream, and the
status page agrees.

The binary comes from ``scripts/fetch-icecast`` (``apt-get download`` + ``dpkg -x`` of icecast2
and the libraries missing here, into .cache/icecast2; ``scripts/test`` runs it first), or
``ONAIR_TEST_ICECAST`` names one. Without it the test skips and says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

import aiohttp
import pytest

from bot.announcer.watcher import Announcement, StationWatch
from bot.station import RetryPolicy, StationInfo
from bot.station.hosts.icecast import IcecastClient, IcyPolicy

from .support.waiting import wait_for

ROOT = Path(__file__).resolve().parent.parent
FETCHED = ROOT / ".cache" / "icecast2" / "root"
SOURCE_PASSWORD = "source-pw-test"
ADMIN_PASSWORD = "admin-pw-test"
# One probe of a server starting up: a connection it accepts but does not answer yet must not
# outlast the wait around it.
PROBE = aiohttp.ClientTimeout(total=2)


def icecast_root() -> Path | None:
    """The unpacked package's root (``usr/bin/icecast2`` under it), if any."""
    named = os.environ.get("ONAIR_TEST_ICECAST")
    if named:
        return Path(named).resolve().parent.parent.parent
    return FETCHED if (FETCHED / "usr" / "bin" / "icecast2").exists() else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def config(folder: Path, root: Path, port: int) -> str:
    """A minimal icecast.xml: loopback only, our passwords, the package's web and admin
    stylesheets; as root it drops to nobody (Icecast refuses to run as root)."""
    owner = ""
    if os.geteuid() == 0:
        owner = "<changeowner><user>nobody</user><group>nogroup</group></changeowner>"
    return f"""<icecast>
  <location>Test</location><admin>admin@test</admin><hostname>localhost</hostname>
  <limits><clients>20</clients><sources>2</sources><source-timeout>10</source-timeout></limits>
  <authentication><source-password>{SOURCE_PASSWORD}</source-password>
    <admin-user>admin</admin-user><admin-password>{ADMIN_PASSWORD}</admin-password>
  </authentication>
  <listen-socket><port>{port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <paths><basedir>{folder}</basedir><logdir>{folder}/log</logdir>
    <webroot>{folder}/web</webroot><adminroot>{folder}/admin</adminroot></paths>
  <logging><errorlog>-</errorlog><loglevel>2</loglevel></logging>
  <security><chroot>0</chroot>{owner}</security>
</icecast>
"""


def prepare(root: Path, folder: Path) -> None:
    """web/ and admin/ as one folder each (Debian splits them between /usr/share/icecast2 and
    /etc/icecast2 with absolute links, which point nowhere in an unpacked copy) and log/: all
    within reach of nobody, whom Icecast becomes when started as root."""
    folder.chmod(0o755)
    (folder / "log").mkdir()
    (folder / "log").chmod(0o777)
    for part in ("web", "admin"):
        target = folder / part
        target.mkdir()
        for source in (root / "usr/share/icecast2" / part, root / "etc/icecast2" / part):
            for item in source.iterdir() if source.is_dir() else []:
                if item.is_file() and not item.is_symlink():
                    shutil.copy(item, target / item.name)


def _sink(log: Path | None) -> IO[bytes]:
    return open(log or os.devnull, "wb")


@contextlib.asynccontextmanager
async def process(
    *command: str, env: dict[str, str] | None = None, log: Path | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``command`` running for the block (its output into ``log``, else dropped)."""
    with _sink(log) as out:
        child = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out, env=env
        )
    try:
        yield child
    finally:
        if child.returncode is None:
            child.terminate()
            try:
                await asyncio.wait_for(child.wait(), timeout=5)
            except TimeoutError:
                child.kill()
                await child.wait()


@pytest.fixture
async def icecast(ffmpeg: str) -> AsyncIterator[str]:
    """A real Icecast on loopback with FFmpeg's tone on /live: its base URL."""
    root = icecast_root()
    if root is None:
        pytest.skip(
            "no Icecast 2 binary: scripts/fetch-icecast unpacks Debian's icecast2 into "
            ".cache/icecast2 (apt-get download; needs Debian's package list), or set "
            "ONAIR_TEST_ICECAST to an icecast2 binary"
        )
    folder = Path(tempfile.mkdtemp(prefix="onair-icecast-"))
    try:
        prepare(root, folder)
        libraries = next((root / "usr" / "lib").glob("*-linux-gnu"), root / "usr" / "lib")
        env = {**os.environ, "LD_LIBRARY_PATH": str(libraries)}
        log = folder / "icecast.out"
        async with aiohttp.ClientSession(timeout=PROBE) as session:
            # The free port may be taken by another test's server before Icecast binds it:
            # then Icecast exits at once, and it is started again on another.
            for _attempt in range(3):
                port = free_port()
                (folder / "icecast.xml").write_text(config(folder, root, port))
                base = f"http://127.0.0.1:{port}"
                binary = str(root / "usr/bin/icecast2")
                async with process(
                    binary, "-c", str(folder / "icecast.xml"), env=env, log=log
                ) as child:
                    try:
                        await wait_for(
                            lambda c=child, b=base: (
                                c.returncode is not None or answers(session, f"{b}/status-json.xsl")
                            ),
                            within=15,
                        )
                    except AssertionError:
                        said = log.read_text(errors="replace")[-2000:]
                        raise AssertionError(f"Icecast did not answer in 15 s:\n{said}") from None
                    if child.returncode is not None:
                        continue
                    source = f"icecast://source:{SOURCE_PASSWORD}@127.0.0.1:{port}/live"
                    async with process(
                        *(ffmpeg, "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi"),
                        *("-i", "sine=frequency=440:sample_rate=44100", "-ac", "2"),
                        *("-c:a", "libmp3lame", "-b:a", "128k", "-content_type", "audio/mpeg"),
                        *("-ice_name", "Real FM", "-ice_genre", "Test", "-f", "mp3", source),
                    ):
                        await wait_for(lambda b=base: has_live(session, b), within=15)
                        yield base
                        return
            said = log.read_text(errors="replace")[-2000:]
            raise AssertionError(f"Icecast exited at start three times:\n{said}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def answers(session: aiohttp.ClientSession, url: str) -> bool:
    with contextlib.suppress(aiohttp.ClientError, OSError):
        async with session.get(url) as response:
            return response.status == 200
    return False


async def has_live(session: aiohttp.ClientSession, base: str) -> bool:
    with contextlib.suppress(aiohttp.ClientError, OSError):
        async with session.get(f"{base}/status-json.xsl") as response:
            return "/live" in await response.text()
    return False


async def set_title(session: aiohttp.ClientSession, base: str, song: str) -> None:
    query = {"mount": "/live", "mode": "updinfo", "charset": "UTF-8", "song": song}
    auth = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
    async with session.get(f"{base}/admin/metadata", params=query, headers=auth) as response:
        assert response.status == 200
        assert "Metadata update successful" in await response.text()


TITLES = ['Café Tacuba - "Eres"', "Nina Simone - Don't Let Me Be Misunderstood"]


async def test_the_real_icecast_each_title_once_by_icy_and_status(icecast):
    base = icecast
    async with aiohttp.ClientSession() as session:
        await set_title(session, base, "Station ID - Opening")
        client = IcecastClient(
            base,
            "/live",
            session=session,
            retry=RetryPolicy(tries=2, base_delay=0.05, budget=5.0),
            icy_policy=IcyPolicy(read_timeout=10.0, first_delay=0.2, max_delay=1.0),
        )
        watch = StationWatch(client)
        seen: list[Announcement] = []
        pushed: list[str] = []

        async def listener(announcement: Announcement) -> None:
            seen.append(announcement)

        watch.listeners.append(listener)
        await wait_for(lambda: titled(client, "Station ID - Opening"), within=10)
        await watch.poll()

        async def follow() -> None:
            async for change in client.changes():
                if change is not None:
                    pushed.append(change.now_playing or "")
                    watch.pushed = change
                await watch.poll()

        follower = asyncio.create_task(follow())
        try:
            await wait_for(lambda: client.push_live, within=10)
            # A, B, then A again after B: three plays, each seen once.
            for count, song in enumerate([TITLES[0], TITLES[1], TITLES[0]], start=2):
                await set_title(session, base, song)
                await wait_for(lambda n=count: len(seen) >= n, within=10)
            await watch.poll()
            await watch.poll()
            assert client.push_live
            live = await client.info(max_age=0)
            assert live.listeners == 0  # OnAir's own connection (Icecast counts 1) left out
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
        displays = [a.play.display for a in seen]
        assert displays == ["Station ID - Opening", TITLES[0], TITLES[1], TITLES[0]]
        assert pushed == [TITLES[0], TITLES[1], TITLES[0]]  # every change seen on the stream
        status: StationInfo = await client.info(max_age=0)  # the status page agrees
        assert status.now_playing == TITLES[0]
        assert status.name == "Real FM"
        assert status.links.listen == f"{base}/live"  # <hostname> is localhost


async def titled(client: IcecastClient, title: str) -> bool:
    return (await client.info(max_age=0)).now_playing == title
