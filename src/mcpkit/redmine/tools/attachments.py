"""Attachment tools: metadata, content, upload, delete.

A model needs what is *in* a file, so ``download_attachment`` returns it as content: an image
as an image item, a PDF, DOCX or XLSX as its extracted text, any other text as it is, each long
text in parts whose end names the call that reads on. Uploads come from the client as base64
content, so the client and the server need no shared directory, or as a public web address the
server fetches (``url``, size-limited, private addresses refused); ``REDMINE_ATTACHMENTS_DIR``
remains for saving binary files that have no text and for uploading files by path.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools import from_url
from mcpkit.redmine.tools.args import paging, project_ref
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.extract import Kind, extract_text, image_type, kind_of
from mcpkit.redmine.tools.resource import Resource, delete_tool, get_tool, read
from mcpkit.redmine.tools.results import done, entity_element, entity_of
from mcpkit.redmine.tools.schemas import ident
from mcpkit.results import Element, xml_result
from mcpkit.tools import params as p

CATEGORY = "attachments"
MAX_UPLOAD = 20 * 1024 * 1024
"""Bytes one upload may carry (a path's file, or base64 content once decoded)."""
MAX_READ = 20 * 1024 * 1024
"""Bytes downloaded to read one attachment; a larger file is refused before its download."""
MAX_IMAGE = 4 * 1024 * 1024
"""Bytes of an image returned inline (clients refuse larger images)."""
MAX_CHARS = 20_000
"""Characters of text one call returns; the rest is read with ``offset``."""
ATTACHMENT = Resource(
    "attachment",
    "attachments",
    "attachments/{id}",
    shown=("filename", "filesize", "content_type", "author"),
    id_schema=ident("Attachment number"),
)
FILE_FIELDS: dict[str, dict[str, Any]] = {
    "content": p.string("Base64 bytes", min_length=1),
    "path": p.string("Or a path in the attachments directory", min_length=1),
    "url": p.string(f"Or a public web address, up to {MAX_UPLOAD // 2**20} MB", min_length=1),
    "filename": p.string(),
    "description": p.string(),
}


class _TextCache:
    """Extracted texts of the last few attachments, so reading a long PDF in parts extracts it once.

    An attachment's content never changes in Redmine. Every read first fetches the attachment's
    metadata with the caller's own key, so the cache never shows a file its caller may not see.
    """

    def __init__(self, entries: int = 8) -> None:
        self.entries = entries
        self._texts: OrderedDict[tuple[str, int], str] = OrderedDict()

    def get(self, key: tuple[str, int]) -> str | None:
        found = self._texts.get(key)
        if found is not None:
            self._texts.move_to_end(key)
        return found

    def put(self, key: tuple[str, int], text: str) -> None:
        self._texts[key] = text
        while len(self._texts) > self.entries:
            self._texts.popitem(last=False)


TEXTS = _TextCache()


def safe_name(name: str) -> str:
    """A file name that cannot climb out of a directory."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name).strip("._")
    return cleaned[:120] or "attachment"


def inside(directory: Path | None, relative: str) -> Path:
    """``relative`` resolved under ``directory``; refused when unset or escaping it."""
    if directory is None:
        raise ValidationError(
            "File transfer is disabled: set REDMINE_ATTACHMENTS_DIR to a directory the server may use, "
            "or send the file as base64 content"
        )
    target = (directory / relative).resolve()
    if not target.is_relative_to(directory):
        raise ValidationError(f"{relative!r} is outside REDMINE_ATTACHMENTS_DIR; give a path inside it")
    return target


def decode_content(value: str) -> bytes:
    """Base64 bytes, also as a ``data:`` URL or wrapped over lines; anything else is refused."""
    text = value.strip()
    if text.startswith("data:") and "," in text:
        head, _, text = text.partition(",")
        if not head.endswith(";base64"):
            raise ValidationError("content: a data URL must be base64, such as data:image/png;base64,...")
    text = re.sub(r"\s+", "", text)
    if not text:
        raise ValidationError("content is empty: give the file's bytes in base64")
    if len(text) > (MAX_UPLOAD // 3 + 1) * 4:
        raise ValidationError(f"content is larger than {MAX_UPLOAD // (1024 * 1024)} MB")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(
            "content must be the file's bytes in base64, letters, digits, + and / only"
        ) from None


async def file_bytes(rc: RedmineContext, args: Mapping[str, Any]) -> tuple[bytes, str]:
    """The bytes to upload and their name: base64 ``content``, ``path`` in the attachments
    directory, or ``url``, a public web address (see :mod:`mcpkit.redmine.tools.from_url`)."""
    content, relative, url = args.get("content"), args.get("path"), args.get("url")
    if sum(given is not None for given in (content, relative, url)) != 1:
        raise ValidationError(
            "give the file once: as content in base64 with a filename, as path, or as url; not several"
        )
    if url is not None:
        config = rc.client.config
        data, name = await from_url.fetch(
            str(url), max_bytes=MAX_UPLOAD, private_hosts=config.private_url_hosts, timeout=config.timeout
        )
        return data, safe_name(str(args.get("filename") or name))
    if content is not None:
        if not args.get("filename"):
            raise ValidationError("filename is needed with content, such as report.pdf")
        return decode_content(str(content)), safe_name(str(args["filename"]))
    source = inside(rc.client.config.attachments_dir, str(relative))
    apath = anyio.Path(source)
    if not await apath.is_file():
        raise ValidationError(f"{relative!r} is not a file in REDMINE_ATTACHMENTS_DIR")
    if (await apath.stat()).st_size > MAX_UPLOAD:
        raise ValidationError(f"{relative!r} is larger than {MAX_UPLOAD // (1024 * 1024)} MB")
    return await apath.read_bytes(), safe_name(str(args.get("filename") or source.name))


async def upload_item(rc: RedmineContext, args: Mapping[str, Any]) -> dict[str, Any]:
    """Upload the file the arguments give; the upload item Redmine attaches by token."""
    data, name = await file_bytes(rc, args)
    token = await rc.client.upload(data, name)
    item = {
        "token": token,
        "filename": name,
        "content_type": mimetypes.guess_type(name)[0] or "application/octet-stream",
    }
    if args.get("description"):
        item["description"] = str(args["description"])
    return item


def newest_named(attachments: Any, filename: str, where: str) -> dict[str, Any]:
    """The newest attachment called ``filename``: proof that Redmine attached the upload."""
    found = [a for a in attachments or [] if isinstance(a, dict) and a.get("filename") == filename]
    if not found:
        raise ValidationError(f"Redmine accepted the upload but {where} shows no {filename}")
    return max(found, key=lambda a: a.get("id", 0))


async def text_of(rc: RedmineContext, aid: int, kind: Kind, data: bytes) -> str:
    key = (rc.client.config.url, aid)
    text = TEXTS.get(key)
    if text is None:
        if kind == "text":
            text = data.decode("utf-8", errors="replace")
        else:
            text = await anyio.to_thread.run_sync(extract_text, kind, data, f"attachment {aid}")
        TEXTS.put(key, text)
    return text


async def download_attachment(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    aid: int = args["id"]
    info = await read(rc, ATTACHMENT, aid)
    size = info.get("filesize")
    if isinstance(size, int) and size > MAX_READ and not args.get("save"):
        raise ValidationError(
            f"attachment {aid} has {size} bytes, more than the {MAX_READ // (1024 * 1024)} MB read here; "
            "open it in a browser"
        )
    data, content_type = await rc.client.download(aid)
    filename = str(info.get("filename") or f"attachment-{aid}")
    kind = kind_of(data, content_type)
    out = Element(
        "attachment",
        {"id": aid, "filename": filename, "content_type": content_type, "size": len(data), "kind": kind},
    )
    if args.get("save") or kind == "binary":
        return await saved(rc, out, aid, filename, data)
    if kind == "image":
        if len(data) > MAX_IMAGE:
            raise ValidationError(
                f"image attachment {aid} has {len(data)} bytes, more than the {MAX_IMAGE // (1024 * 1024)} MB "
                "sent inline; call download_attachment with save true to keep it on the server"
            )
        mime = image_type(data) or "image/png"
        result = xml_result(out)
        result.content.append(mcp_types.ImageContent(data=base64.b64encode(data).decode(), mime_type=mime))
        return result
    text = await text_of(rc, aid, kind, data)
    offset = paging(args)[0]
    part = text[offset : offset + MAX_CHARS]
    end = offset + len(part)
    out.set("offset", offset).set("returned", len(part)).set("total_chars", len(text))
    if end < len(text):
        out.set("next_offset", end)
    out.add(rc.fmt.full().text("content", part, {"untrusted": True}))
    if end < len(text):
        out.child("more", None, f"call download_attachment with id={aid} and offset={end} for the rest")
    return xml_result(out, limit=None)


async def saved(
    rc: RedmineContext, out: Element, aid: int, filename: str, data: bytes
) -> mcp_types.CallToolResult:
    folder = rc.client.config.attachments_dir
    if folder is None:
        raise ValidationError(
            f"attachment {aid} is binary with {len(data)} bytes and no text; set REDMINE_ATTACHMENTS_DIR "
            "to let the server save it, or open it in a browser"
        )
    target = folder / f"{aid}-{safe_name(filename)}"
    await anyio.Path(target).write_bytes(data)
    out.child("saved_to", None, str(target))
    return xml_result(out)


async def upload_attachment(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    issue_id, project, title = args.get("issue_id"), args.get("project"), args.get("title")
    wiki = project is not None or title is not None
    if (issue_id is not None and wiki) or (issue_id is None and not (project and title)):
        raise ValidationError("give issue_id, or project and title of a wiki page; not both")
    if issue_id is not None:
        return await attach_to_issue(rc, int(issue_id), args)
    return await attach_to_wiki_page(rc, project, str(title), args)


async def attach_to_issue(
    rc: RedmineContext, issue_id: int, args: Mapping[str, Any]
) -> mcp_types.CallToolResult:
    item = await upload_item(rc, args)
    update: dict[str, Any] = {"uploads": [item]}
    if args.get("notes"):
        update["notes"] = str(args["notes"])
    what = f"issue {issue_id}"
    await rc.client.put(f"issues/{issue_id}.json", what=what, json={"issue": update})
    body = await rc.client.get(f"issues/{issue_id}.json", what=what, params={"include": "attachments"})
    newest = newest_named(entity_of(body, "issue").get("attachments"), item["filename"], what)
    return done(f"Attached {item['filename']} to {what}.", entity_element(rc, "attachment", newest))


async def attach_to_wiki_page(
    rc: RedmineContext, project: Any, title: str, args: Mapping[str, Any]
) -> mcp_types.CallToolResult:
    """Redmine attaches files to a wiki page only with its text: the text read is sent back with
    its version, so a change saved in between is refused (409) rather than overwritten."""
    ref = project_ref(project)
    name = title.strip().replace(" ", "_")
    path, what = f"projects/{seg(ref)}/wiki/{seg(name)}", f"wiki page {name} of project {ref}"
    page = entity_of(await rc.client.get(f"{path}.json", what=what), "wiki_page")
    item = await upload_item(rc, args)
    body: dict[str, Any] = {"text": page.get("text") or "", "version": page.get("version"), "uploads": [item]}
    if args.get("notes"):
        body["comments"] = str(args["notes"])
    try:
        await rc.client.put(f"{path}.json", what=what, json={"wiki_page": body})
    except RedmineError as exc:
        if exc.status == 409:
            raise ValidationError(f"{what} changed while the file was attached; call again") from None
        raise
    shown = await rc.client.get(f"{path}.json", what=what, params={"include": "attachments"})
    newest = newest_named(entity_of(shown, "wiki_page").get("attachments"), item["filename"], what)
    return done(f"Attached {item['filename']} to {what}.", entity_element(rc, "attachment", newest))


TOOLS = (
    get_tool(
        ATTACHMENT,
        "get_attachment",
        "Show the metadata of an attachment: file name, size, type, author and address.",
        CATEGORY,
    ),
    redmine_tool(
        "download_attachment",
        "Read an attachment: images as images, PDF, DOCX, XLSX and other text as text, in parts.\n"
        "Files without text are saved in the attachments directory of the server.",
        {
            "id": ident("Attachment number"),
            "offset": p.integer(),
            "save": p.boolean("Save in the attachments directory"),
        },
        download_attachment,
        CATEGORY,
        ("id",),
    ),
    redmine_tool(
        "upload_attachment",
        "Attach a file to an issue, or to a wiki page given project and title.",
        {
            "issue_id": ident("Issue number"),
            "project": p.string(),
            "title": p.string(),
            **FILE_FIELDS,
            "notes": p.string("History note"),
        },
        upload_attachment,
        CATEGORY,
        (),
        "write",
    ),
    delete_tool(
        ATTACHMENT,
        "delete_attachment",
        "Delete an attachment. Cannot be undone.\nWithout confirm true it only previews.",
        CATEGORY,
    ),
)
