"""The ``onair`` command: check, watch, simulate, demo, run, sync and invite.

Exit codes: 0 success, 2 station error (one line on stderr), 64 bad arguments (usage), 69 Discord
unreachable (``sync``), 70 unexpected failure, 78 bad configuration or a token Discord refused.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import getpass
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from importlib import metadata
from typing import NoReturn, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import aiohttp
from yarl import URL

from . import errors
from .console import summary
from .console.links_check import links_line, links_state
from .runtime.envfile import is_placeholder, load_env_file, placeholder_line
from .songlinks import wanted
from .songsearch import ITUNES_SEARCH_URL
from .station import (
    Playlist,
    RetryPolicy,
    StationAuthError,
    StationClient,
    StationError,
    StationInfo,
    Stats,
    redact_url,
)
from .station.hosts import requests_class, source_class
from .station.source import DEFAULT_KIND, KINDS, Feature, station_ref
from .util.serialize import to_jsonable

EXIT_STATION = 2
EXIT_USAGE = 64
EXIT_CONFIG = 78
_TOKEN_WHERE = "the bot's token (Developer Portal -> your application -> Bot -> Reset Token)"


class _Parser(argparse.ArgumentParser):
    """Bad arguments exit 64 (EX_USAGE) with the usage, not argparse's 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise argparse.ArgumentTypeError(f"unknown time zone {name!r}") from None


def _station_id(value: str) -> str:
    if not value.strip().isdigit():
        raise argparse.ArgumentTypeError(f"station id must be a whole number, not {value!r}")
    return value.strip()


def _station_of_kind(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--station`` checked for ``--kind`` (a number, a shortcode, a mount or a sid)."""
    try:
        args.station = str(station_ref(args.kind, args.station))
    except ValueError as error:
        parser.error(f"argument --station: {error}")


_SERVER_ONLY = "give the server only, like https://c5.radioboss.fm"


def _http_url(value: str) -> str:
    """The station server's base URL. Never echoed when it may carry a secret (credentials, a
    query with the key)."""
    try:
        url = URL(value.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a URL; {_SERVER_ONLY}") from None
    if url.user is not None or url.password is not None:
        raise argparse.ArgumentTypeError(
            f"the base URL must not carry credentials (refused; not shown); {_SERVER_ONLY}, "
            "and the key with --key - or $ONAIR_STATION_KEY"
        )
    if url.query_string or url.fragment or "?" in value:
        raise argparse.ArgumentTypeError(f"the base URL has a query; {_SERVER_ONLY}")
    if url.scheme not in ("http", "https") or not url.host:
        raise argparse.ArgumentTypeError(
            f"the base URL must start with http:// or https://; {_SERVER_ONLY}"
        )
    if url.path not in ("", "/"):
        raise argparse.ArgumentTypeError(
            f"the base URL has a path ({url.path[:40]}); {_SERVER_ONLY}"
        )
    return str(url.origin())


def _snowflake(value: str) -> int:
    if not value.strip().isdigit() or not 15 <= len(value.strip()) <= 21:
        raise argparse.ArgumentTypeError(f"expected a Discord id (15-21 digits), not {value!r}")
    return int(value)


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be above zero: {value!r}")
    return number


def _listen_port(value: str) -> int:
    if not value.strip().isdigit() or not 0 <= int(value) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a TCP port from 0 to 65535, not {value!r}")
    return int(value)


def _add_station_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-url", required=True, type=_http_url, help="e.g. https://c5.radioboss.fm"
    )
    parser.add_argument(
        "--kind",
        choices=KINDS,
        default=DEFAULT_KIND,
        help="the station's host (default %(default)s)",
    )
    parser.add_argument(
        "--station",
        required=True,
        help="the station on its server: RadioBOSS a number, AzuraCast a shortcode or number, "
        "Icecast a mount (/live), Shoutcast a stream id",
    )
    parser.add_argument(
        "--key",
        default=None,
        help="API key; '-' reads it from a prompt without echo (or stdin), so it is not in the "
        "process list (default: $ONAIR_STATION_KEY; some stations need none)",
    )
    parser.add_argument(
        "--tz", type=_zone, default=ZoneInfo("UTC"), help="station time zone (IANA)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--timeout", type=_positive, default=10.0, help="seconds per request (default 10)"
    )


# ``onair simulate``'s options, one row each: flag, type, default and help (its default follows).
_SIMULATE_OPTIONS: tuple[tuple[str, Callable[[str], object], object, str], ...] = (
    ("--host", str, "127.0.0.1", "address to listen on"),
    ("--port", _listen_port, 8765, "TCP port to listen on, 0 for any free one"),
    ("--speed", _positive, 1.0, "divide track lengths by this; 10 plays a 3-minute track in 18 s"),
    ("--key", str, "demo-key", "API key the simulator accepts"),
    ("--seed", int, 1, "seed of its programme: the same seed plays the same tracks"),
    ("--station", _station_id, "1", "station id to serve"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="onair", description="OnAir: a Discord bot for RadioBOSS Cloud stations.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = commands.add_parser("check", help="fetch info, playlist and 7-day stats and summarise")
    _add_station_args(check)
    check.add_argument(
        "--lookup-url",
        default=ITUNES_SEARCH_URL,
        help="the song search of \"Find this song\" ([links] lookup_url; 'off' skips it; "
        "default Apple's)",
    )

    watch = commands.add_parser("watch", help="print one line per new play until interrupted")
    _add_station_args(watch)

    simulate = commands.add_parser(
        "simulate",
        help="run the station simulator until interrupted",
        description="A simulated RadioBOSS Cloud station on this machine, for trying `onair "
        "check`, `onair watch` and the bot without a real station. Ctrl+C stops it.",
    )
    for flag, kind, default, text in _SIMULATE_OPTIONS:
        simulate.add_argument(
            flag, type=kind, default=default, help=f"{text} (default %(default)s)"
        )
    simulate.add_argument(
        "--kind",
        choices=KINDS,
        default=DEFAULT_KIND,
        metavar="KIND",
        help="the host it answers as: radioboss, azuracast, icecast or shoutcast "
        "(default %(default)s)",
    )
    simulate.add_argument(
        "--mount",
        default="/live",
        help="the mount an icecast simulator serves (default %(default)s)",
    )

    demo = commands.add_parser("demo", help="offline demo: simulator + announcer in the terminal")
    demo.add_argument(
        "--duration", type=_positive, default=60.0, help="seconds to run (default 60)"
    )
    demo.add_argument("--seed", type=int, default=7)

    run = commands.add_parser("run", help="run the Discord bot")
    run.add_argument("--config", default="config.toml", help="path of the TOML config")

    sync = commands.add_parser("sync", help="register the slash commands with Discord and exit")
    sync.add_argument("--config", default="config.toml", help="path of the TOML config")
    sync.add_argument(
        "--guild",
        type=_snowflake,
        default=None,
        help="sync to this guild only (at once); default: [bot] dev_guild, or globally if 0",
    )

    invite = commands.add_parser(
        "invite", help="print the URLs that add the bot to a server and to your own account"
    )
    invite.add_argument(
        "--client-id",
        type=_snowflake,
        default=None,
        help="the application id (default: $ONAIR_APPLICATION_ID, else read from the token in "
        "$ONAIR_DISCORD_TOKEN)",
    )
    return parser


def _version() -> str:
    try:
        return metadata.version("onair-bot")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _invite(args: argparse.Namespace) -> int:
    from .config import TOKEN_ENV
    from .runtime.invite import (
        USER_INSTALL_NOTE,
        client_id_from_token,
        invite_url,
        user_install_url,
    )
    from .runtime.tokenshape import token_problem, token_problem_line

    client_id = args.client_id
    if client_id is None and os.environ.get("ONAIR_APPLICATION_ID", "").strip():
        try:
            client_id = _snowflake(os.environ["ONAIR_APPLICATION_ID"])
        except argparse.ArgumentTypeError as error:
            print(f"onair: ONAIR_APPLICATION_ID: {error}", file=sys.stderr)
            return EXIT_USAGE
    token = os.environ.get(TOKEN_ENV, "")
    if client_id is None and is_placeholder(token):
        print(
            f"onair: {placeholder_line(TOKEN_ENV, _TOKEN_WHERE)}, or pass --client-id",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    if client_id is None and token.strip():
        problem = token_problem(token)
        if problem is not None:
            print(
                f"onair: {token_problem_line(TOKEN_ENV, problem)}, or pass --client-id",
                file=sys.stderr,
            )
            return EXIT_CONFIG
        client_id = client_id_from_token(token)
    if client_id is None:
        print(
            "onair: no application id: pass --client-id (Developer Portal -> your application -> "
            f"General Information -> Application ID), or set ONAIR_APPLICATION_ID or {TOKEN_ENV}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(f"Add OnAir to a server: {invite_url(client_id)}")
    print(
        "Install it on your own account (/nowplaying, /recent and /listen in any chat): "
        f"{user_install_url(client_id)}"
    )
    print(f"  {USER_INSTALL_NOTE}")
    return 0


def _key(args: argparse.Namespace) -> str | None:
    if args.key == "-":
        if sys.stdin.isatty():
            return getpass.getpass("Station API key (not shown): ").strip() or None
        return sys.stdin.readline().strip() or None
    return args.key or os.environ.get("ONAIR_STATION_KEY") or None


def _key_source(args: argparse.Namespace) -> str:
    """Where the key of ``check`` / ``watch`` comes from, for the line that says it was refused."""
    if args.key == "-":
        return errors.CLI_KEY_FROM_PROMPT
    return errors.CLI_KEY_FROM_OPTION if args.key else errors.CLI_KEY_FROM_ENV


def _fail(what: str, args: argparse.Namespace, error: StationError) -> int:
    message = errors.station_detail(error)
    if isinstance(error, StationAuthError):
        message = errors.cli_key_refused(args.key, args.key_source)
    print(f"onair: {what} from {redact_url(args.base_url)} failed: {message}", file=sys.stderr)
    return EXIT_STATION


def _client(args: argparse.Namespace, session: aiohttp.ClientSession) -> StationClient:
    timeout = aiohttp.ClientTimeout(total=args.timeout, connect=min(5.0, args.timeout))
    retry = RetryPolicy(budget=args.timeout * 2)
    return source_class(args.kind)(
        args.base_url,
        args.station,
        args.key,
        session=session,
        zone=args.tz,
        timeout=timeout,
        retry=retry,
    )


async def _check(args: argparse.Namespace) -> int:
    today = datetime.now(args.tz).date()
    first = today - timedelta(days=6)
    async with aiohttp.ClientSession() as session:
        client = _client(args, session)
        try:
            info = await client.info()
        except StationError as error:
            return _fail("fetching the station's info", args, error)
        playlist: Playlist | None = None
        stats: Stats | None = None
        requests: tuple[str | None, int | None] = (None, None)
        try:
            if client.offers(Feature.PLAYLIST):
                playlist = await client.playlist()
        except StationError as error:
            return _fail("fetching the playlist", args, error)
        try:
            if client.offers(Feature.STATS):
                stats = await client.stats(first, today)
        except StationError as error:
            return _fail("fetching the statistics", args, error)
        if client.offers(Feature.REQUESTS):
            requests = await requests_class(args.kind)(
                args.base_url, args.station, session=session, timeout=client.timeout
            ).state()
        play = info.current_play()
        links = await links_state(session, args.lookup_url, play)
    if args.json:
        print(
            json.dumps(
                {
                    "kind": args.kind,
                    "features": sorted(client.features),
                    "info": to_jsonable(info),
                    "current_play": to_jsonable(info.current_play()),
                    "playlist": to_jsonable(playlist),
                    "stats": to_jsonable(stats),
                    "stats_range": [first.isoformat(), today.isoformat()],
                    "requests": (
                        {"state": requests[0], "waiting": requests[1]} if requests[0] else None
                    ),
                    "links": {"state": links[0], "detail": links[1]},
                },
                ensure_ascii=False,
            )
        )
        return 0
    print(
        render_check(
            info,
            playlist,
            stats,
            first.isoformat(),
            today.isoformat(),
            kind=args.kind,
            features=client.features,
        )
    )
    if requests[0] is not None:
        print(summary.requests_line(requests[0], requests[1]))
    else:
        print(summary.not_offered_line("Requests", args.kind))
    print(links_line(*links, asked=play is not None and wanted(play)))
    return 0


def render_check(
    info: StationInfo,
    playlist: Playlist | None,
    stats: Stats | None,
    first: str,
    last: str,
    *,
    kind: str = DEFAULT_KIND,
    features: frozenset[Feature] = StationClient.features,
) -> str:
    """What ``check`` prints: the same lines for every kind of host, a part the host does not
    offer said to be so."""
    lines = [summary.host_line(kind)]
    lines += summary.now_playing_lines(info)
    if Feature.RECENT in features or info.recent:
        lines += summary.recent_lines(info)
    else:
        lines.append(summary.not_offered_line("Recent", kind))
    if playlist is not None:
        lines += summary.playlist_lines(playlist, datetime.now(UTC), info=info)
    else:
        lines.append(summary.not_offered_line("Playlist", kind))
    if stats is not None:
        lines += summary.stats_lines(stats, first, last)
    else:
        lines.append(summary.not_offered_line("Stats", kind))
    return "\n".join(lines)


class _Simulator(Protocol):
    """A simulator `onair simulate` serves: started on an address, stopped at the end."""

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str: ...

    async def stop(self) -> None: ...


async def _simulate(args: argparse.Namespace) -> int:
    try:
        simulator, station, hints = _simulator_of(args)
    except ValueError as error:  # an Icecast mount that is not one
        print(f"onair: --mount: {error}", file=sys.stderr)
        return 2
    try:
        base = await simulator.start(args.host, args.port)
    except OSError as error:
        why = os.strerror(error.errno) if error.errno else str(error)
        hint = ""
        if error.errno == errno.EADDRINUSE:
            hint = " (another program listens there: --port 0 takes any free port)"
        print(
            f"onair: cannot listen on {args.host}:{args.port}: {why}{hint}",
            file=sys.stderr,
        )
        return 1
    what = "mount" if args.kind == "icecast" else "station id"
    print(f"Station simulator on {base} ({what} {station}); Ctrl+C stops it.", flush=True)
    # The key as the environment variable, as docs/running.md advises for a real key (only
    # RadioBOSS Cloud's API takes one here).
    keyed = args.key and args.kind == DEFAULT_KIND
    key = f"ONAIR_STATION_KEY={shlex.quote(args.key)} " if keyed else ""
    kind = f" --kind {args.kind}" if args.kind != DEFAULT_KIND else ""
    onair, here = onair_as_typed()
    print(
        f"  In another terminal{' in this folder' if here else ''}: "
        f"{key}{onair} check{kind} --base-url {base} --station {shlex.quote(station)}",
        flush=True,
    )
    for line in hints:
        print(f"  {line.format(base=base)}", flush=True)
    print(f"  Its song search, for [links] lookup_url: {base}/search", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await simulator.stop()
    return 0


def _simulator_of(args: argparse.Namespace) -> tuple[_Simulator, str, list[str]]:
    """The simulator of ``--kind`` with its one station, that station's name on it and lines
    that say how to drive it ({base} is its address). Sped up, a song still reports its library
    length: a 3-minute song aired in 18 s is a song (announced), not an item under 30 s (a
    jingle, which OnAir never announces)."""
    from .simulator import StationSimulator

    library = args.speed != 1.0
    if args.kind == "icecast":
        from .simulator.hosts.icecast import IcecastSimulator

        mount = str(station_ref("icecast", args.mount))
        icecast = IcecastSimulator(admin_password=args.key or "hackme")
        icecast.add_mount(mount, seed=args.seed, speed=args.speed)
        password = shlex.quote(icecast.admin_password)
        by_hand = f"{{base}}/admin/metadata?mount={mount}&mode=updinfo&charset=UTF-8"
        return icecast, mount, [f"Title by hand: curl -u admin:{password} '{by_hand}&song=A+-+B'"]
    number = int(args.station)
    if args.kind == "azuracast":
        from .simulator.hosts.azuracast import AzuraCastSimulator

        azura = AzuraCastSimulator()
        added = azura.add_azura(number, seed=args.seed, speed=args.speed, library_durations=library)
        return azura, added.shortcode, []
    simulator = StationSimulator()
    if args.kind == "shoutcast":
        from .simulator.hosts.shoutcast import ShoutcastSimulator

        simulator = ShoutcastSimulator()
    simulator.add_station(
        number,
        key=args.key or None,
        seed=args.seed,
        speed=args.speed,
        library_durations=library,
    )
    return simulator, str(number), []


def onair_as_typed() -> tuple[str, bool]:
    """How to type `onair` again, and whether only from this folder: `onair` when the PATH finds
    this very command, else the path it was started by (`.venv/bin/onair` after the Quick start,
    where the venv is not on the PATH)."""
    started = sys.argv[0]
    found = shutil.which("onair")
    if os.path.basename(started) == "onair":
        if found and os.path.realpath(found) == os.path.realpath(started):
            return "onair", False
        return shlex.quote(started), not os.path.isabs(started)
    if found:
        return "onair", False
    return f"{shlex.quote(sys.executable)} -m bot.cli", False


# Commands that read secrets from the environment, so from .env too (never over a variable the
# environment already has). The simulator and the demo need none.
_READS_SECRETS = frozenset({"check", "watch", "run", "sync", "invite"})


def main(
    argv: Sequence[str] | None = None,
    *,
    discord_connector: Callable[[], aiohttp.BaseConnector] | None = None,
) -> int:
    """``discord_connector`` is for ``onair run`` under test (a fake Discord's CA and DNS)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("check", "watch"):
        _station_of_kind(parser, args)
    try:
        return _dispatch(args, discord_connector)
    except KeyboardInterrupt:
        # Before `run` and `sync` have their own signal handlers (imports, the event loop's
        # start); Ctrl+C is how `simulate`, `watch` and `demo` stop, silently.
        if args.command in ("run", "sync"):
            print("onair: SIGINT received while starting; stopped", file=sys.stderr)
        return 130


def _dispatch(
    args: argparse.Namespace, discord_connector: Callable[[], aiohttp.BaseConnector] | None
) -> int:
    if args.command in _READS_SECRETS:
        loaded = load_env_file()
        if loaded.error() is not None:
            print(f"onair: {loaded.error()}", file=sys.stderr)
            return EXIT_CONFIG
        for warning in loaded.warnings():
            print(f"onair: {warning}", file=sys.stderr)
    if args.command in ("check", "watch"):
        args.key_source = _key_source(args)
        args.key = _key(args)  # read once (a prompt), before the event loop starts
    if args.command == "invite":
        return _invite(args)
    if args.command == "check":
        runner = _check(args)
    elif args.command == "simulate":
        runner = _simulate(args)
    elif args.command == "watch":
        from .console.modes import watch

        runner = watch(
            args.base_url,
            args.station,
            args.key,
            kind=args.kind,
            zone=args.tz,
            as_json=args.json,
            key_source=args.key_source,
        )
    elif args.command == "demo":
        from .console.modes import demo

        runner = demo(duration=args.duration, seed=args.seed)
    elif args.command == "sync":
        from .run import sync_once

        runner = sync_once(args.config, args.guild)
    else:
        from .run import run_bot

        runner = run_bot(args.config, discord_connector=discord_connector)
    return asyncio.run(runner)


if __name__ == "__main__":
    sys.exit(main())
