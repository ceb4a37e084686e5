"""Attachment tools: metadata, download, upload, delete.

Files only ever touch the disk under ``REDMINE_ATTACHMENTS_DIR``: binary downloads are saved
there and uploads are read from there; without the setting both are refused. Text content is
returned inline (marked untrusted), so reading a log file needs no directory at all.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path
from typing import Any

import anyio
import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, delete_tool, get_tool, read
from mcpkit.redmine.tools.results import done, entity_element
from mcpkit.redmine.tools.schemas import ident
from mcpkit.results import Element, xml_result
from mcpkit.tools import params as p

CATEGORY = "attachments"
TEXT_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/javascript")
MAX_UPLOAD = 20 * 1024 * 1024
ATTACHMENT = Resource(
    "attachment",
    "attachments",
    "attachments/{id}",
    shown=("filename", "filesize", "content_type", "author"),
    id_schema=ident("Attachment number"),
)


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


def safe_name(name: str) -> str:
    """A file name that cannot climb out of a directory."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name).strip("._")
    return cleaned[:120] or "attachment"


def inside(directory: Path | None, relative: str) -> Path:
    """``relative`` resolved under ``directory``; refused when unset or escaping it."""
    if directory is None:
        raise ValidationError(
            "File transfer is disabled: set REDMINE_ATTACHMENTS_DIR to a directory the server may use"
        )
    target = (directory / relative).resolve()
    if not target.is_relative_to(directory):
        raise ValidationError(f"{relative!r} is outside REDMINE_ATTACHMENTS_DIR; give a path inside it")
    return target


async def upload_file(rc: RedmineContext, relative: str, filename: str | None) -> dict[str, Any]:
    """Upload a file from the attachments directory; the upload item Redmine attaches by token."""
    source = inside(rc.client.config.attachments_dir, relative)
    apath = anyio.Path(source)
    if not await apath.is_file():
        raise ValidationError(f"{relative!r} is not a file in REDMINE_ATTACHMENTS_DIR")
    if (await apath.stat()).st_size > MAX_UPLOAD:
        raise ValidationError(f"{relative!r} is larger than {MAX_UPLOAD // (1024 * 1024)} MB")
    name = safe_name(filename or source.name)
    token = await rc.client.upload(await apath.read_bytes(), name)
    return {
        "token": token,
        "filename": name,
        "content_type": mimetypes.guess_type(name)[0] or "application/octet-stream",
    }


async def download_attachment(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    aid: int = args["id"]
    info = await read(rc, ATTACHMENT, aid)
    data, content_type = await rc.client.download(aid)
    filename = str(info.get("filename") or f"attachment-{aid}")
    out = Element(
        "attachment", {"id": aid, "filename": filename, "content_type": content_type, "size": len(data)}
    )
    folder = rc.client.config.attachments_dir
    if is_text(data, content_type) and not args.get("save"):
        out.add(rc.fmt.full().text("content", data.decode("utf-8", errors="replace"), {"untrusted": True}))
        return xml_result(out)
    if folder is None:
        raise ValidationError(
            f"attachment {aid} is binary with {len(data)} bytes; set REDMINE_ATTACHMENTS_DIR "
            "to let the server save it, or open it in a browser"
        )
    target = folder / f"{aid}-{safe_name(filename)}"
    await anyio.Path(target).write_bytes(data)
    out.child("saved_to", None, str(target))
    return xml_result(out)


async def upload_attachment(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    issue_id: int = args["issue_id"]
    item = await upload_file(rc, str(args["path"]), args.get("filename"))
    if args.get("description"):
        item["description"] = str(args["description"])
    update: dict[str, Any] = {"uploads": [item]}
    if args.get("notes"):
        update["notes"] = str(args["notes"])
    await rc.client.put(f"issues/{issue_id}.json", what=f"issue {issue_id}", json={"issue": update})
    issue = (
        await rc.client.get(
            f"issues/{issue_id}.json", what=f"issue {issue_id}", params={"include": "attachments"}
        )
    ).get("issue") or {}
    attached = [a for a in issue.get("attachments") or [] if a.get("filename") == item["filename"]]
    if not attached:
        raise ValidationError(f"Redmine accepted the upload but issue {issue_id} shows no {item['filename']}")
    newest = max(attached, key=lambda a: a.get("id", 0))
    return done(f"Attached {item['filename']} to issue {issue_id}.", entity_element(rc, "attachment", newest))


TOOLS = (
    get_tool(
        ATTACHMENT,
        "get_attachment",
        "Show the metadata of an attachment: file name, size, type, author and address.",
        CATEGORY,
    ),
    redmine_tool(
        "download_attachment",
        "Get the content of an attachment. Text is returned; binary files are saved\n"
        "in the attachments directory of the server, or refused when none is set.",
        {
            "id": ident("Attachment number"),
            "save": p.boolean("Save to the attachments directory even if text"),
        },
        download_attachment,
        CATEGORY,
        ("id",),
    ),
    redmine_tool(
        "upload_attachment",
        "Attach a file from the attachments directory of the server to an issue.",
        {
            "issue_id": ident("Issue number"),
            "path": p.string("File path relative to the attachments directory", min_length=1),
            "filename": p.string("Name to show in Redmine, default the file name"),
            "description": p.string("Short description of the file"),
            "notes": p.string("A note to add to the issue history"),
        },
        upload_attachment,
        CATEGORY,
        ("issue_id", "path"),
        "write",
    ),
    delete_tool(
        ATTACHMENT,
        "delete_attachment",
        "Delete an attachment. Cannot be undone.\nWithout confirm true it only previews.",
        CATEGORY,
    ),
)
