"""The ``onair`` command's entry point. Importing OnAir takes a second or two on a small machine;
a Ctrl+C meanwhile ends in one line, not in a traceback (``bot.cli`` handles it from then on)."""

from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None, **options: Any) -> int:
    try:
        from .cli import main as cli_main

        return cli_main(argv, **options)
    except KeyboardInterrupt:  # (bot.cli handles it once it has read its arguments)
        print("onair: SIGINT received while starting; stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
