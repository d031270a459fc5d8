"""A Drive file's bytes as text Sleuth can chunk, by what the file is. Pure: bytes in, markdown out.

Google Docs arrive exported as markdown (headings kept), Slides as plain text, Sheets as CSV (Drive exports the
first sheet) rendered as one markdown table, header row first, which the chunker cuts into row groups that each
repeat the header. PDFs are read with pypdf, Word files with python-docx (their headings become markdown
headings); both are imported only when such a file comes.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

GOOGLE_DOC = "application/vnd.google-apps.document"
GOOGLE_SHEET = "application/vnd.google-apps.spreadsheet"
GOOGLE_SLIDES = "application/vnd.google-apps.presentation"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PLAIN = {"text/plain", "text/markdown", "text/csv"}


@dataclass(frozen=True)
class Reading:
    """How a kind of file is fetched (`export` to a MIME type, or downloaded when None) and what it is."""

    export: str | None
    kind: str


READINGS = {
    GOOGLE_DOC: Reading("text/markdown", "document"),
    GOOGLE_SHEET: Reading("text/csv", "spreadsheet"),
    GOOGLE_SLIDES: Reading("text/plain", "presentation"),
    PDF: Reading(None, "pdf"),
    DOCX: Reading(None, "document"),
    **{mime: Reading(None, "spreadsheet" if mime == "text/csv" else "document") for mime in PLAIN},
}


class Unreadable(ValueError):
    """The bytes are not what the file's type says (a broken PDF, a .docx that is not a zip)."""


def to_text(mime_type: str, data: bytes) -> str:
    if mime_type in (GOOGLE_SHEET, "text/csv"):
        return csv_table(data.decode("utf-8-sig", errors="replace"))
    if mime_type == PDF:
        return pdf_text(data)
    if mime_type == DOCX:
        return docx_text(data)
    return data.decode("utf-8-sig", errors="replace").strip()


def csv_table(text: str) -> str:
    return markdown_table(list(csv.reader(io.StringIO(text))))


def markdown_table(raw: list[list[str]]) -> str:
    """Rows as one markdown table; the first row is the header. Empty rows are dropped, pipes escaped."""
    rows = [[cell.strip().replace("|", "\\|") for cell in row] for row in raw]
    rows = [row for row in rows if any(row)]
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    header = [cell or f"Column {i + 1}" for i, cell in enumerate(rows[0] + [""] * (width - len(rows[0])))]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows[1:]]
    return "\n".join(lines)


def pdf_text(data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except (PdfReadError, ValueError, OSError) as exc:
        raise Unreadable(f"unreadable PDF: {type(exc).__name__}") from exc
    return "\n\n".join(page for page in pages if page)


def docx_text(data: bytes) -> str:
    import zipfile

    from docx import Document

    try:
        document = Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise Unreadable(f"unreadable Word file: {type(exc).__name__}") from exc
    lines = []
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        level = style.removeprefix("Heading ").strip()
        lines.append(
            f"{'#' * int(level)} {text}" if style.startswith("Heading ") and level.isdigit() else text
        )
    for table in document.tables:
        table_text = markdown_table([[cell.text for cell in row.cells] for row in table.rows])
        if table_text:
            lines.append(table_text)
    return "\n\n".join(lines)
