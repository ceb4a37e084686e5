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

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.base import (
    CONFIRM,
    Ctx,
    confirm_or_preview,
    define,
    done,
    entity_of,
    entity_result,
    ident,
    num,
)
from mcpkit.results import Element, xml_result
from mcpkit.tools import ToolSpec
from mcpkit.tools import params as p

CATEGORY = "attachments"
TEXT_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/javascript")
MAX_UPLOAD = 20 * 1024 * 1024


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


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The attachment tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt
    folder = client.config.attachments_dir

    async def meta(aid: int) -> dict[str, Any]:
        return entity_of(await client.get(f"attachments/{aid}.json", what=f"attachment {aid}"), "attachment")

    async def get_attachment(args: dict[str, Any]) -> Any:
        return entity_result(ctx, "attachment", {"attachment": await meta(num(args["id"]))})

    async def download(args: dict[str, Any]) -> Any:
        aid = num(args["id"])
        info = await meta(aid)
        data, content_type = await client.download(aid)
        filename = str(info.get("filename") or f"attachment-{aid}")
        out = Element(
            "attachment", {"id": aid, "filename": filename, "content_type": content_type, "size": len(data)}
        )
        if is_text(data, content_type) and not args.get("save"):
            out.add(fmt.text("content", data.decode("utf-8", errors="replace"), {"untrusted": True}))
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

    async def upload(args: dict[str, Any]) -> Any:
        issue_id = num(args["issue_id"])
        source = inside(folder, str(args["path"]))
        apath = anyio.Path(source)
        if not await apath.is_file():
            raise ValidationError(f"{args['path']!r} is not a file in REDMINE_ATTACHMENTS_DIR")
        if (await apath.stat()).st_size > MAX_UPLOAD:
            raise ValidationError(f"{args['path']!r} is larger than {MAX_UPLOAD // (1024 * 1024)} MB")
        data = await apath.read_bytes()
        filename = safe_name(str(args.get("filename") or source.name))
        token = await client.upload(data, filename)
        item: dict[str, Any] = {
            "token": token,
            "filename": filename,
            "content_type": mimetypes.guess_type(filename)[0] or "application/octet-stream",
        }
        if args.get("description"):
            item["description"] = str(args["description"])
        update: dict[str, Any] = {"uploads": [item]}
        if args.get("notes"):
            update["notes"] = str(args["notes"])
        await client.put(f"issues/{issue_id}.json", what=f"issue {issue_id}", json={"issue": update})
        issue = entity_of(
            await client.get(
                f"issues/{issue_id}.json", what=f"issue {issue_id}", params={"include": "attachments"}
            ),
            "issue",
        )
        attached = [a for a in issue.get("attachments") or [] if a.get("filename") == filename]
        newest = max(attached, key=lambda a: a.get("id", 0)) if attached else None
        return done(
            f"Attached {filename} to issue {issue_id}.",
            fmt.entity("attachment", newest) if newest else None,
        )

    async def delete_attachment(args: dict[str, Any]) -> Any:
        aid = num(args["id"])

        async def preview() -> list[Element]:
            return [fmt.entity("attachment", await meta(aid))]

        async def delete() -> None:
            await client.delete(f"attachments/{aid}.json", what=f"attachment {aid}")

        return await confirm_or_preview(args, what=f"attachment {aid}", preview=preview, delete=delete)

    return [
        define(
            "get_attachment",
            "Show the metadata of an attachment: file name, size, type, author and address.",
            {"id": ident("Attachment number")},
            get_attachment,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        ),
        define(
            "download_attachment",
            "Get the content of an attachment. Text is returned; binary files are saved\n"
            "in the attachments directory of the server, or refused when none is set.",
            {
                "id": ident("Attachment number"),
                "save": p.boolean("Save to the attachments directory even if text"),
            },
            download,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        ),
        define(
            "upload_attachment",
            "Attach a file from the attachments directory of the server to an issue.",
            {
                "issue_id": ident("Issue number"),
                "path": p.string("File path relative to the attachments directory", min_length=1),
                "filename": p.string("Name to show in Redmine, default the file name"),
                "description": p.string("Short description of the file"),
                "notes": p.string("A note to add to the issue history"),
            },
            upload,
            category=CATEGORY,
            required=["issue_id", "path"],
        ),
        define(
            "delete_attachment",
            "Delete an attachment. Cannot be undone.\nWithout confirm true it only shows the attachment.",
            {"id": ident("Attachment number"), "confirm": CONFIRM},
            delete_attachment,
            category=CATEGORY,
            required=["id"],
            destructive=True,
        ),
    ]
