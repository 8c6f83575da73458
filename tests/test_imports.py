"""Every module of bot/ and cogs/ imports. mypy runs with ignore_missing_imports (for libraries
without types), so a module path that no longer exists after a move is caught here, not by it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import bot
import cogs


def _modules() -> list[str]:
    return sorted(
        info.name
        for package in (bot, cogs)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    )


@pytest.mark.parametrize("name", _modules())
def test_the_module_imports(name: str) -> None:
    assert importlib.import_module(name).__name__ == name
