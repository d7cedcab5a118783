"""The docs site builds with ``mkdocs build --strict`` (as ``make docs`` and ``.ci/run`` build it),
every page of the nav is there, and no internal link of the built HTML is broken: each ``href``
and ``src`` inside the site names a file that exists, and each ``#fragment`` an element id of
that page."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

from tests.helpers import REPO


class Links(HTMLParser):
    """The ids of a page and the links it makes (``a href``, ``link href``, ``img``/``script src``)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and values.get("name"):
            self.ids.add(str(values["name"]))
        for attr in ("href", "src"):
            if values.get(attr) and tag in ("a", "link", "img", "script"):
                self.links.append(str(values[attr]))


def parse(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text(encoding="utf-8"))
    return links


def nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for entry in nav for page in nav_pages(entry)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def test_every_nav_page_is_built(site: Path) -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = nav_pages(config["nav"])
    assert len(pages) >= 30
    for page in pages:
        built = site / page.replace(".md", ".html")
        assert built.is_file(), page
        assert "<h1" in built.read_text(encoding="utf-8"), page


def test_no_internal_link_is_broken(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    parsed = {page: parse(page) for page in pages}
    broken: list[str] = []
    checked = 0
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:", "javascript:")):
                continue  # outside the site
            path = unquote(parts.path)
            if path.startswith("/"):  # 404.html links from the site's root (it is served anywhere)
                target = (site / path.lstrip("/")).resolve()
            else:
                target = (page.parent / path).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {link} (no file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no #{parts.fragment})")
            checked += 1
    assert not broken, "\n".join(broken)
    assert checked > 500


def test_the_generated_reference_is_in_the_site(site: Path) -> None:
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    assert "Usage: contam-guard scan [OPTIONS]" in cli and "--accept-guard-change" in cli
    assert "Generated from the typer app" in cli and "holds its" not in cli  # the page, not its stub
    config = (site / "reference" / "config.html").read_text(encoding="utf-8")
    assert "scan.max_pairs_per_item" in config and "rules.gpt3.n" in config
