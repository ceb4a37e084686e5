"""Project file tools: the Files tab of a project (``/projects/:id/files``), list and upload."""

from __future__ import annotations

from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.args import project_ref
from mcpkit.redmine.tools.attachments import upload_file
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, list_tool
from mcpkit.redmine.tools.results import done, entity_element
from mcpkit.redmine.tools.schemas import PROJECT, ident
from mcpkit.tools import params as p

CATEGORY = "attachments"
FILE = Resource("file", "files", "attachments/{id}", "projects/{project}/files")


async def upload_project_file(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Upload, attach to the project (or one of its versions), then find the file in the list."""
    ref = project_ref(args["project"])
    item = await upload_file(rc, str(args["path"]), args.get("filename"))
    if args.get("description"):
        item["description"] = str(args["description"])
    if args.get("version_id") is not None:
        item["version_id"] = args["version_id"]
    path = f"projects/{seg(ref)}/files.json"
    await rc.client.post(path, what=f"a file of project {ref}", json={"file": item})
    body = await rc.client.get(path, what=f"the files of project {ref}")
    found = [
        f for f in body.get("files") or [] if isinstance(f, dict) and f.get("filename") == item["filename"]
    ]
    if not found:
        raise ValidationError(f"Redmine accepted the upload but project {ref} lists no {item['filename']}")
    newest = max(found, key=lambda f: f.get("id", 0))
    return done(
        f"Added {item['filename']} to the files of project {ref}.", entity_element(rc, "file", newest)
    )


TOOLS = (
    list_tool(
        FILE,
        "list_project_files",
        "List the files of a project with their versions, sizes and download addresses.",
        CATEGORY,
        item_call="download_attachment with id={id}",
    ),
    redmine_tool(
        "upload_project_file",
        "Add a file from the attachments directory of the server to the files of a project.",
        {
            "project": PROJECT,
            "path": p.string("File path relative to the attachments directory", min_length=1),
            "filename": p.string("Name to show in Redmine, default the file name"),
            "description": p.string("Short description of the file"),
            "version_id": ident("Version the file belongs to"),
        },
        upload_project_file,
        CATEGORY,
        ("project", "path"),
        "write",
    ),
)
