"""Base64 content and file kinds: the parsers behind uploads from the client and reading attachments."""

from __future__ import annotations

import base64
import io
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.attachments import decode_content
from mcpkit.redmine.tools.extract import kind_of


@given(
    st.binary(min_size=1, max_size=2000),
    st.sampled_from(["", "data:application/pdf;base64,"]),
    st.integers(0, 76),
)
def test_any_bytes_come_back_from_their_base64_however_wrapped(data: bytes, prefix: str, width: int) -> None:
    """Models wrap base64 over lines, send it as a data URL, or drop the padding."""
    text = base64.b64encode(data).decode()
    if width:
        text = "\n".join(text[i : i + width] for i in range(0, len(text), width))
    assert decode_content(prefix + text) == data
    assert decode_content(text.rstrip("=")) == data


@given(st.text(min_size=1, max_size=50))
def test_text_that_is_not_base64_is_refused_in_one_line(text: str) -> None:
    cleaned = "".join(text.split())
    if cleaned and all(c.isascii() and (c.isalnum() or c in "+/=") for c in cleaned):
        return  # valid alphabet: may decode
    with pytest.raises(ValidationError) as info:
        decode_content(text)
    assert "\n" not in str(info.value)


def test_a_data_url_that_is_not_base64_is_refused() -> None:
    with pytest.raises(ValidationError, match="base64"):
        decode_content("data:text/plain,hello")


def zipped(*names: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name in names:
            package.writestr(name, "<x/>")
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "declared", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n....", "application/octet-stream", "image"),
        (b"\xff\xd8\xff\xe0....", "image/jpeg", "image"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "", "image"),
        (b"%PDF-1.7\n", "application/octet-stream", "pdf"),
        (zipped("word/document.xml"), "application/zip", "docx"),
        (zipped("xl/workbook.xml"), "application/octet-stream", "xlsx"),
        (zipped("other.txt"), "application/zip", "binary"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml", "text"),
        ("plain é text".encode(), "application/octet-stream", "text"),
        (b"\x00\x01\x02", "text/plain", "text"),
        (b"\x00\x01\x02", "application/octet-stream", "binary"),
    ],
)
def test_kind_is_read_from_the_bytes_before_the_declared_type(data: bytes, declared: str, kind: str) -> None:
    assert kind_of(data, declared) == kind


@given(st.binary(max_size=300), st.sampled_from(["", "text/plain", "application/pdf", "image/png"]))
def test_any_bytes_get_a_kind(data: bytes, declared: str) -> None:
    assert kind_of(data, declared) in ("image", "pdf", "docx", "xlsx", "text", "binary")
