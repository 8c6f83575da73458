"""The README is a short front door and the manual lives in docs/ (issue 25): every page is in
the site's nav, every README link reaches a page, and every benchmark's command is in the manual.
CI builds the site itself with `mkdocs build --strict` (.ci/run); these checks need no mkdocs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _nav_pages(nav: Any) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def test_the_readme_is_a_short_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, len(lines)


def test_every_readme_link_into_docs_reaches_a_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert targets
    missing = [target for target in targets if not (ROOT / target).is_file()]
    assert not missing, missing


def test_every_page_of_the_manual_is_in_the_sites_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    assert config["strict"] is True
    listed = set(_nav_pages(config["nav"]))
    pages = {
        str(page.relative_to(DOCS))
        for page in DOCS.rglob("*.md")
        if page.relative_to(DOCS).parts[0] != "screens"
    }
    assert pages == listed


def test_every_benchmark_has_its_command_in_the_manual():
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    modules = sorted(
        path.stem
        for path in (ROOT / "bench").glob("*.py")
        if path.stem not in {"__init__", "common"}
    )
    assert modules
    missing = [name for name in modules if f"python -m bench.{name}" not in page]
    assert not missing, missing
