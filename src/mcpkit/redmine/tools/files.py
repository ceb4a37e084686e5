"""Project file tools: the Files tab of a project (``/projects/:id/files``), list and upload.

A file comes as base64 content from the client or from the attachments directory, as for
attachments (:func:`mcpkit.redmine.tools.attachments.upload_item`)."""

from __future__ import annotations

from typing import Any

import mcp_types

from mcpkit.redmine.api import seg
from mcpkit.redmine.tools.args import project_ref
from mcpkit.redmine.tools.attachments import FILE_FIELDS, newest_named, upload_item
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import Resource, list_tool
from mcpkit.redmine.tools.results import done, entity_element
from mcpkit.redmine.tools.schemas import PROJECT, ident

CATEGORY = "attachments"
FILE = Resource("file", "files", "attachments/{id}", "projects/{project}/files")


async def upload_project_file(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    """Upload, attach to the project (or one of its versions), then find the file in the list."""
    ref = project_ref(args["project"])
    item = await upload_item(rc, args)
    if args.get("version_id") is not None:
        item["version_id"] = args["version_id"]
    path = f"projects/{seg(ref)}/files.json"
    await rc.client.post(path, what=f"a file of project {ref}", json={"file": item})
    body = await rc.client.get(path, what=f"the files of project {ref}")
    newest = newest_named(body.get("files"), item["filename"], f"the files of project {ref}")
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
        "Add a file to the files of a project.",
        {"project": PROJECT, **FILE_FIELDS, "version_id": ident("Version the file belongs to")},
        upload_project_file,
        CATEGORY,
        ("project",),
        "write",
    ),
)
