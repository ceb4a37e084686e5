"""What an attachment's bytes are, and its text: images stay images, documents become text.

Models ask for the content of a screenshot, a PDF specification, a Word document or a
spreadsheet attached to an issue; a download path is no use to them (the server and the client
rarely share a disk). Here the bytes are sorted by what they are (magic bytes first, since
Redmine's content type is whatever the uploader's browser said), and PDF, DOCX and XLSX are
turned into plain text with pypdf, python-docx and openpyxl. Those libraries load only when a
document is read, so starting the server does not pay for them.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from typing import Literal

from mcpkit.errors import ValidationError

Kind = Literal["image", "pdf", "docx", "xlsx", "text", "binary"]
TEXT_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/javascript")
IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
"""The raster formats MCP clients show; an SVG is text and is returned as text."""


def image_type(data: bytes) -> str | None:
    """The image MIME type by magic bytes, or ``None``."""
    for magic, mime in IMAGE_MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_text(data: bytes, content_type: str) -> bool:
    """Text when Redmine says so, or when the bytes are valid UTF-8 without NUL bytes."""
    base = content_type.split(";")[0].strip().lower()
    if base.startswith("text/") or base in TEXT_TYPES:
        return True
    if b"\x00" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def office_kind(data: bytes) -> Kind | None:
    """``docx`` or ``xlsx`` for an Office Open XML package, by the parts inside the zip."""
    if not data.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = set(package.namelist())
    except (zipfile.BadZipFile, ValueError):
        return None
    if "word/document.xml" in names:
        return "docx"
    if "xl/workbook.xml" in names:
        return "xlsx"
    return None


def kind_of(data: bytes, content_type: str) -> Kind:
    """What the bytes are: checked by content before the declared type, which uploaders get wrong."""
    if image_type(data):
        return "image"
    if data.startswith(b"%PDF-"):
        return "pdf"
    office = office_kind(data)
    if office:
        return office
    return "text" if is_text(data, content_type) else "binary"


def extract_text(kind: Kind, data: bytes, what: str) -> str:
    """The text of a PDF, DOCX or XLSX document; a file the library cannot read is one clear line.

    Runs the (synchronous, CPU-bound) libraries; call it in a worker thread.
    """
    try:
        if kind == "pdf":
            return _pdf_text(data)
        if kind == "docx":
            return _docx_text(data)
        if kind == "xlsx":
            return _xlsx_text(data)
    except ImportError as exc:
        raise ValidationError(
            f"reading {kind.upper()} files needs {exc.name}: install mcpkit[redmine]"
        ) from None
    except ValidationError:
        raise
    except Exception as exc:  # a damaged or encrypted file: the libraries raise many kinds
        raise ValidationError(
            f"{what} looks like a {kind.upper()} file but its text cannot be read: {type(exc).__name__}"
        ) from None
    raise ValueError(f"no text extraction for {kind}")


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        raise ValidationError("the PDF is encrypted; its text cannot be read without the password")
    pages = [page.extract_text() or "" for page in reader.pages]
    if len(pages) == 1:
        return pages[0]
    return "\n\n".join(f"[page {n}]\n{text}" for n, text in enumerate(pages, 1))


def _docx_text(data: bytes) -> str:
    from docx import Document

    document = Document(io.BytesIO(data))
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:
        lines.append("")
        lines.extend("\t".join(cell.text for cell in row.cells) for row in table.rows)
    return "\n".join(lines)


def _xlsx_text(data: bytes) -> str:
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        parts = [
            f"[sheet {sheet.title}]\n" + "\n".join(_rows(sheet.iter_rows(values_only=True))) for sheet in book
        ]
    finally:
        book.close()
    return "\n\n".join(parts)


def _rows(rows: Iterable[tuple[object, ...]]) -> Iterable[str]:
    """Rows as tab-separated lines, trailing empty cells and empty rows left out."""
    for row in rows:
        cells = ["" if value is None else str(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            yield "\t".join(cells)
