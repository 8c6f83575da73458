"""The README is a short front door and the manual lives in docs/ (issue 25): every page is in
the site's nav, every README link reaches a page, and every benchmark's command is in the manual.
CI builds the site itself with `mkdocs build --strict` (.ci/run); these checks need no mkdocs.
Every list reads as a list on the site as on GitHub: the site's Markdown (Python-Markdown) wants
a blank line before a list and four spaces for what belongs to an item, GitHub's does not, and
`mkdocs build --strict` passes either way."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml
from markdown_it import MarkdownIt

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
        if path.stem not in {"__init__", "common", "child"}  # helpers, not benchmarks
    )
    assert modules
    missing = [name for name in modules if f"python -m bench.{name}" not in page]
    assert not missing, missing


class _ListItems(HTMLParser):
    """Each <li> of a page as (nesting depth, its first letters): the shape of its lists."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.open: list[list[Any]] = []
        self.items: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("ul", "ol"):
            self.depth += 1
        elif tag == "li":
            self.open.append([self.depth, ""])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("ul", "ol"):
            self.depth -= 1
        elif tag == "li" and self.open:
            depth, text = self.open.pop()
            self.items.append((depth, re.sub(r"\W+", "", text)[:40]))

    def handle_data(self, data: str) -> None:
        for item in self.open:
            item[1] += data


def _items(html: str) -> list[tuple[int, str]]:
    parser = _ListItems()
    parser.feed(html)
    return sorted(parser.items)


def _on_the_site(text: str) -> list[tuple[int, str]]:
    """Rendered as `mkdocs build` does: Python-Markdown with mkdocs.yml's extensions."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    names: list[str] = []
    options: dict[str, Any] = {}
    for extension in config["markdown_extensions"]:
        if isinstance(extension, dict):
            ((name, settings),) = extension.items()
            names.append(name)
            options[name] = settings or {}
        else:
            names.append(extension)
    return _items(markdown.markdown(text, extensions=names, extension_configs=options))


def _on_github(text: str) -> list[tuple[int, str]]:
    """Rendered by a CommonMark reader with tables, as GitHub shows a page."""
    return _items(MarkdownIt("commonmark").enable("table").render(text))


def _pages() -> list[Path]:
    return sorted(
        page for page in DOCS.rglob("*.md") if page.relative_to(DOCS).parts[0] != "screens"
    )


def test_a_list_glued_to_a_paragraph_is_no_list_on_the_site():
    glued = "Steps:\n- one\n- two\n\n1. first\n\n   more of the first\n2. second\n"
    assert len(_on_github(glued)) == 4
    assert _on_the_site(glued) != _on_github(glued)
    fixed = "Steps:\n\n- one\n- two\n\n1. first\n\n    more of the first\n\n2. second\n"
    assert _on_the_site(fixed) == _on_github(fixed)


@pytest.mark.parametrize("page", _pages(), ids=lambda page: str(page.relative_to(DOCS)))
def test_every_list_on_github_is_the_same_list_on_the_site(page: Path):
    text = page.read_text(encoding="utf-8")
    github, site = _on_github(text), _on_the_site(text)
    lost = [item for item in github if item not in site]
    hint = "a blank line before the list? four spaces for what belongs to an item?"
    assert github == site, f"not the same list on the site ({hint}): {lost}"
