"""What tools export without API access: Jira's CSV export and Confluence's HTML space export.

**Jira CSV** ("Export > CSV (all fields)"): one header row whose columns repeat for multi-valued fields
(`Component/s`, `Labels`, `Comment`, `Outward issue link (Blocks)`, ...). A `Comment` cell is
`<date>;<author>;<body>` (`14/Jul/25 3:42 PM;557058:ab12;Looks good`). A file is a Jira export when its header
has `Issue key` and `Summary`.

**Confluence HTML export** ("Space tools > Export space > HTML"): a folder with `index.html` (space details and
the page tree), one `<Title>_<id>.html` (or `<id>.html`) per page, and `attachments/`, `images/`, `styles/`.
A page holds its title in `#title-text` ("Space : Title"), its ancestors in `#breadcrumbs`, its author and
date in `.page-metadata` and its body in `#main-content`.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from connectors.base import Link, LinkType, SourceDoc
from connectors.sources.folder.common import (
    FolderContext,
    UnreadableItem,
    name_links,
    parse_when,
    read_text,
    when,
)

_COLUMNS = {
    "Issue key": "key",
    "Summary": "summary",
    "Description": "description",
    "Issue Type": "type",
    "Status": "status",
    "Priority": "priority",
    "Assignee": "assignee",
    "Reporter": "reporter",
    "Created": "created",
    "Updated": "updated",
}
_LISTS = {"Component/s": "components", "Labels": "labels"}
_LINK_COLUMN = re.compile(r"^(Inward|Outward) issue link \((.+)\)$")
_INWARD_NAMES = {"Blocks": "is blocked by", "Duplicate": "is duplicated by", "Cloners": "is cloned by"}
_OUTWARD_NAMES = {"Blocks": "blocks", "Duplicate": "duplicates", "Cloners": "clones", "Relates": "relates"}
_DATE_IN_META = re.compile(r"\bon\s+(\d{4}-\d{2}-\d{2}|[A-Z][a-z]{2} \d{1,2}, \d{4})")
EXPORT_ASSET_DIRS = {"attachments", "images", "styles", "thumbnails"}


# ---------------------------------------------------------------------------------------------- Jira CSV
def is_jira_csv(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return "Issue key" in header and "Summary" in header


def jira_csv_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | UnreadableItem]]:
    """(row number, ticket record or the reason the row cannot be read) for every row of a Jira export."""
    try:
        rows = list(csv.reader(io.StringIO(read_text(path), newline="")))
    except csv.Error as exc:
        raise UnreadableItem("bad CSV", str(exc)) from exc
    header, body = rows[0], rows[1:]
    for number, row in enumerate(body, start=2):
        if not any(cell.strip() for cell in row):
            continue
        try:
            yield number, _record(header, row)
        except UnreadableItem as exc:
            yield number, exc


def _record(header: list[str], row: list[str]) -> dict[str, Any]:
    record: dict[str, Any] = {"components": [], "labels": [], "comments": [], "links": []}
    for name, cell in zip(header, row, strict=False):
        cell = cell.strip()
        if not cell:
            continue
        if name in _COLUMNS:
            record[_COLUMNS[name]] = cell
        elif name in _LISTS:
            record[_LISTS[name]].append(cell)
        elif name == "Comment":
            record["comments"].append(_comment(cell))
        elif name in {"Parent", "Parent key"} and cell and not cell.isdigit():
            record["links"].append({"type": "parent", "key": cell})
        elif link := _LINK_COLUMN.match(name):
            names = _INWARD_NAMES if link.group(1) == "Inward" else _OUTWARD_NAMES
            record["links"].append({"type": names.get(link.group(2), "relates"), "key": cell})
    for field in ("created", "updated"):
        if record.get(field):
            record[field] = parse_when(record[field])
    return record


def _comment(cell: str) -> dict[str, Any]:
    parts = cell.split(";", 2)
    if len(parts) == 3:
        try:
            created = parse_when(parts[0])
        except UnreadableItem:
            created = None
        if created is not None:
            return {"created": created.date().isoformat(), "author": parts[1].strip(), "body": parts[2]}
    return {"body": cell}


# ------------------------------------------------------------------------------ Confluence HTML export
def is_confluence_export(folder: Path) -> bool:
    """A folder Confluence's HTML export wrote: its `index.html` lists the space's pages."""
    index = folder / "index.html"
    try:
        head = index.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return False
    return "Available Pages" in head or ('id="title-text"' in head and "confluenceTable" in head)


def is_confluence_page(raw: str) -> bool:
    return 'id="title-text"' in raw and 'id="main-content"' in raw


def confluence_page_doc(raw: str, ctx: FolderContext, path: Path) -> SourceDoc:
    from bs4 import BeautifulSoup  # only folders holding an export pay for the import

    soup = BeautifulSoup(raw, "html.parser")
    title_tag, main = soup.find(id="title-text"), soup.find(id="main-content")
    if title_tag is None or main is None:
        raise UnreadableItem("not a Confluence page", "no #title-text or #main-content")
    space, _, title = title_tag.get_text(" ", strip=True).partition(" : ")
    title = (title or space).strip()
    rel = path.relative_to(ctx.root).as_posix()
    links = [Link(target=t, type=LinkType.LINKS_TO) for t in _page_links(main, ctx, path)]
    parent = _parent(soup, ctx, path)
    if parent:
        links.append(Link(target=parent, type=LinkType.PARENT))
    text = _text(main)
    links += name_links(text)
    meta = soup.find(class_="page-metadata")
    meta_text = meta.get_text(" ", strip=True) if meta else ""
    dated = _DATE_IN_META.findall(meta_text)
    author = soup.find(class_="author")
    return ctx.page(
        rel,
        title=title,
        text=text,
        updated_at=when(dated[-1] if dated else None, path),
        acl=ctx.acl(None),
        links=tuple(dict.fromkeys(links)),
        metadata={"space": space.strip(), **({"owner": author.get_text(strip=True)} if author else {})},
    )


def _text(main: Any) -> str:
    """The body as markdown-ish text: headings keep their `#`, blocks their own lines (for the chunker)."""
    for heading in main.find_all(re.compile(r"^h[1-6]$")):
        heading.insert_before("\n\n" + "#" * int(heading.name[1]) + " ")
        heading.insert_after("\n\n")
    for cell in main.find_all(["td", "th"]):
        cell.insert_after(" | ")
    for block in main.find_all(["p", "li", "tr", "br", "div", "pre"]):
        block.insert_after("\n")
    lines = [re.sub(r"[ \t\xa0]+", " ", line).strip() for line in main.get_text().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _page_links(main: Any, ctx: FolderContext, path: Path) -> list[str]:
    targets = []
    for anchor in main.find_all("a", href=True):
        target = _local_page(anchor["href"], ctx, path)
        if target:
            targets.append(target)
    return targets


def _parent(soup: Any, ctx: FolderContext, path: Path) -> str | None:
    crumbs = soup.find(id="breadcrumbs")
    hrefs = [a["href"] for a in crumbs.find_all("a", href=True)] if crumbs else []
    pages = [t for t in (_local_page(h, ctx, path) for h in hrefs) if t]
    return pages[-1] if pages else None


def _local_page(href: str, ctx: FolderContext, path: Path) -> str | None:
    from urllib.parse import unquote

    clean = unquote(href.split("#", 1)[0])
    if "://" in clean or not clean.endswith(".html") or clean.endswith("index.html"):
        return None
    target = (path.parent / clean).resolve()
    try:
        return ctx.page_id(target.relative_to(ctx.root).as_posix())
    except ValueError:
        return None
