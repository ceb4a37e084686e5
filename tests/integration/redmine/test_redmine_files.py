"""Attachments read as content and uploaded as base64, end to end on the real Redmine.

The server runs without ``REDMINE_ATTACHMENTS_DIR``: every file goes up as base64 content and
comes back as content (an image item, extracted text), so client and server share no disk.
The PDF, DOCX and XLSX files are made here, with a minimal PDF writer, python-docx and openpyxl.
"""

from __future__ import annotations

import base64
import io
import struct
import uuid
import zlib

import pytest
from docx import Document
from openpyxl import Workbook

from tests.integration.redmine.redmine_session import RedmineEnv, Session, mcp_session

pytestmark = pytest.mark.anyio


def minimal_pdf(pages: list[str]) -> bytes:
    """A PDF with one line of Helvetica text per page, its cross-reference offsets computed."""
    n = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode()]
    font = 3 + 2 * n
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def tiny_png() -> bytes:
    """A 2x1 RGB PNG."""

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    header = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\x00\x00\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def docx_bytes() -> bytes:
    document = Document()
    document.add_paragraph("Requirements <draft> & notes")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "owner", "Ada"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx_bytes() -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Budget"
    sheet.append(["item", "cost"])
    sheet.append(["servers", 1200])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def attach(s: Session, issue: int, name: str, data: bytes) -> int:
    up = await s.ok("upload_attachment", {"issue_id": issue, "content": b64(data), "filename": name})
    return int(up.findtext("attachment/id") or 0)


async def test_documents_images_and_text_read_as_content(redmine: RedmineEnv) -> None:
    async with mcp_session(redmine) as s:
        ident = f"files-{uuid.uuid4().hex[:10]}"
        await s.ok(
            "create_project",
            {"name": "Files", "identifier": ident, "enabled_modules": ["issue_tracking", "wiki", "files"]},
        )
        made = await s.ok("create_issue", {"project": ident, "subject": "Has files"})
        issue = int(made.findtext("issue/id") or 0)

        pdf = await attach(s, issue, "spec.pdf", minimal_pdf(["Scope (v2) & <limits>", "Second page"]))
        read = await s.ok("download_attachment", {"id": pdf})
        assert read.get("kind") == "pdf" and read.get("next_offset") is None
        assert read.findtext("content") == "[page 1]\nScope (v2) & <limits>\n\n[page 2]\nSecond page"

        docx = await s.ok("download_attachment", {"id": await attach(s, issue, "req.docx", docx_bytes())})
        assert docx.get("kind") == "docx"
        assert docx.findtext("content") == "Requirements <draft> & notes\n\nowner\tAda"

        xlsx = await s.ok("download_attachment", {"id": await attach(s, issue, "budget.xlsx", xlsx_bytes())})
        assert xlsx.get("kind") == "xlsx"
        assert xlsx.findtext("content") == "[sheet Budget]\nitem\tcost\nservers\t1200"

        png = tiny_png()
        image_id = await attach(s, issue, "shot.png", png)
        result = await s.client.call_tool("download_attachment", {"id": image_id})
        assert not result.is_error
        images = [c for c in result.content if getattr(c, "type", "") == "image"]
        assert len(images) == 1 and base64.b64decode(images[0].data) == png  # type: ignore[union-attr]
        assert images[0].mime_type == "image/png"  # type: ignore[union-attr]

        # A long text comes in parts; reading on by next_offset gives back every character.
        long_text = "".join(f'line {n} <&> "quoted" é\n' for n in range(3000))
        text_id = await attach(s, issue, "log.txt", long_text.encode())
        parts, offset = [], 0
        while True:
            part = await s.ok("download_attachment", {"id": text_id, "offset": offset})
            parts.append(part.findtext("content") or "")
            if part.get("next_offset") is None:
                break
            assert f"offset={part.get('next_offset')}" in (part.findtext("more") or "")
            offset = int(part.get("next_offset") or 0)
        assert len(parts) > 1 and "".join(parts) == long_text

        blob = await attach(s, issue, "blob.bin", bytes(range(256)) * 4)
        refused = await s.error("download_attachment", {"id": blob})
        assert "binary" in refused and "REDMINE_ATTACHMENTS_DIR" in refused
        assert "base64" in await s.error(
            "upload_attachment", {"issue_id": issue, "content": "not base64!", "filename": "x.txt"}
        )
        assert "filename" in await s.error("upload_attachment", {"issue_id": issue, "content": b64(b"x")})
        assert "not both" in await s.error(
            "upload_attachment",
            {"issue_id": issue, "project": ident, "title": "Home", "content": b64(b"x"), "filename": "x.txt"},
        )
        damaged = await attach(s, issue, "broken.pdf", b"%PDF-1.4\nthis is not a pdf")
        assert "cannot be read" in await s.error("download_attachment", {"id": damaged})

        # Wiki pages take files too: the page keeps its text and gets no new version.
        await s.ok("create_or_update_wiki_page", {"project": ident, "title": "Home", "text": "Page <text>"})
        on_wiki = await s.ok(
            "upload_attachment",
            {"project": ident, "title": "Home", "content": b64(b"wiki file"), "filename": "w.txt"},
        )
        wiki_file = int(on_wiki.findtext("attachment/id") or 0)
        assert (await s.ok("download_attachment", {"id": wiki_file})).findtext("content") == "wiki file"
        page = await s.ok("get_wiki_page", {"project": ident, "title": "Home"})
        assert page.findtext("text") == "Page <text>" and page.findtext("version") == "1"

        added = await s.ok(
            "upload_project_file", {"project": ident, "content": b64(b"release"), "filename": "rel.txt"}
        )
        file_id = int(added.findtext("file/id") or 0)
        assert (await s.ok("download_attachment", {"id": file_id})).findtext("content") == "release"
        await s.ok("delete_project", {"project": ident, "confirm": True})
