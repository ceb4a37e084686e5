"""Issue tools: list, show, create, update, delete, watchers and relations."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.base import (
    CONFIRM,
    CUSTOM_FIELDS,
    PAGING,
    PROJECT,
    Ctx,
    as_flag,
    as_hours,
    as_pos_int,
    as_text,
    confirm_or_preview,
    custom_fields,
    date_text,
    define,
    done,
    entity_of,
    entity_result,
    ident,
    list_result,
    num,
    page_result,
    paging,
    present,
    project_ref,
    require_some,
)
from mcpkit.redmine.tools.projects import project_id
from mcpkit.results import Element
from mcpkit.tools import ToolSpec, coerce
from mcpkit.tools import params as p

CATEGORY = "issues"
LIST_INCLUDES = ("attachments", "relations")
SHOW_INCLUDES = (
    "journals",
    "children",
    "relations",
    "watchers",
    "attachments",
    "changesets",
    "allowed_statuses",
)
DEFAULT_SHOW = ("journals", "children", "relations", "watchers", "attachments")
RELATION_TYPES = (
    "relates",
    "duplicates",
    "duplicated",
    "blocks",
    "blocked",
    "precedes",
    "follows",
    "copied_to",
    "copied_from",
)
_DATE = r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?"
_DATE_FILTER = re.compile(
    rf"^(>=|<=|=)?{_DATE}$|^><{_DATE}\|{_DATE}$|^(!\*|\*|t|ld|w|lw|l2w|m|lm|y)$|^[<>]t[-+]?\d+$"
)
_SORT = re.compile(r"^[a-z0-9_.]+(:(asc|desc))?(,[a-z0-9_.]+(:(asc|desc))?)*$")
USER_OR_ME = "User number, or me for the key owner"


def _user_or_me(value: Any, name: str) -> str:
    try:
        return str(coerce.as_number_or_special(value, allow=("me",)))
    except ValidationError as exc:
        raise ValidationError(f"{name}: {exc}") from None


def _date_filter(value: Any, name: str) -> str:
    text = str(value).strip() if isinstance(value, str) else ""
    if not _DATE_FILTER.match(text):
        raise ValidationError(
            f"{name}: {str(value)[:40]!r} is not a date filter; use a date like 2025-01-31 with an optional "
            "operator >=, <= or =, or ><2025-01-01|2025-01-31 for a range"
        )
    return text


def _includes(value: Any, allowed: tuple[str, ...], default: tuple[str, ...]) -> str | None:
    items = default if value is None else value
    if not isinstance(items, list | tuple) or any(i not in allowed for i in items):
        raise ValidationError(f"include must be a list of: {', '.join(allowed)}")
    return ",".join(dict.fromkeys(items)) or None


def issue_filters(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to Redmine's ``/issues.json`` query parameters (pure, for tests)."""
    q: dict[str, Any] = {}
    if args.get("project") is not None:
        q["project_id"] = project_ref(args["project"])
    if args.get("status") is not None:
        q["status_id"] = coerce.as_number_or_special(
            str(args["status"]).strip(), allow=("open", "closed", "*")
        )
    for arg, field in (
        ("tracker", "tracker_id"),
        ("parent", "parent_id"),
        ("version", "fixed_version_id"),
        ("category", "category_id"),
        ("priority", "priority_id"),
    ):
        if args.get(arg) is not None:
            q[field] = num(args[arg])
    for arg, field in (("assigned_to", "assigned_to_id"), ("author", "author_id")):
        if args.get(arg) is not None:
            q[field] = _user_or_me(args[arg], arg)
    for arg, field in (("created", "created_on"), ("updated", "updated_on")):
        if args.get(arg) is not None:
            q[field] = _date_filter(args[arg], arg)
    if args.get("subject"):
        q["subject"] = "~" + str(args["subject"])
    for cf in custom_fields(args) or []:
        value = cf["value"]
        q[f"cf_{cf['id']}"] = "|".join(value) if isinstance(value, list) else value
    if args.get("sort") is not None:
        sort = str(args["sort"]).strip()
        if not _SORT.match(sort):
            raise ValidationError("sort must look like id:desc or priority:desc,id")
        q["sort"] = sort
    include = _includes(args.get("include"), LIST_INCLUDES, ())
    if include:
        q["include"] = include
    return q


def issue_fields(args: Mapping[str, Any], *, me: int | None = None) -> dict[str, Any]:
    """Tool arguments to the body of ``{"issue": ...}`` for create and update (pure)."""
    fields = present(
        args,
        {
            "subject": as_text,
            "description": as_text,
            "tracker_id": as_pos_int,
            "status_id": as_pos_int,
            "priority_id": as_pos_int,
            "category_id": as_pos_int,
            "fixed_version_id": as_pos_int,
            "parent_issue_id": as_pos_int,
            "start_date": date_text,
            "due_date": date_text,
            "estimated_hours": as_hours,
            "is_private": as_flag,
            "notes": as_text,
            "private_notes": as_flag,
        },
    )
    if "done_ratio" in args:
        fields["done_ratio"] = coerce.as_int(args["done_ratio"], minimum=0, maximum=100)
    if args.get("assigned_to") is not None:
        who = _user_or_me(args["assigned_to"], "assigned_to")
        if who == "me":
            if me is None:
                raise ValidationError("assigned_to me needs the key owner, which is unknown")
            fields["assigned_to_id"] = me
        else:
            fields["assigned_to_id"] = int(who)
    if args.get("project") is not None:
        fields["project_id"] = project_ref(args["project"])
    if args.get("watcher_user_ids") is not None:
        fields["watcher_user_ids"] = [num(v) for v in args["watcher_user_ids"]]
    cfs = custom_fields(args)
    if cfs is not None:
        fields["custom_fields"] = cfs
    return fields


_FIELD_SCHEMAS: dict[str, dict[str, Any]] = {
    "subject": p.string("One-line summary", min_length=1, max_length=255),
    "description": p.string("Full description"),
    "tracker_id": ident("Tracker number"),
    "status_id": ident("Status number"),
    "priority_id": ident("Priority number"),
    "assigned_to": p.string(USER_OR_ME),
    "category_id": ident("Issue category number"),
    "fixed_version_id": ident("Target version number"),
    "parent_issue_id": ident("Parent issue number"),
    "start_date": p.string("Start date like 2025-01-31"),
    "due_date": p.string("Due date like 2025-01-31"),
    "estimated_hours": p.number("Estimated hours", minimum=0),
    "done_ratio": p.integer("Percent done from 0 to 100", minimum=0, maximum=100),
    "is_private": p.boolean("Private issue"),
    "custom_fields": CUSTOM_FIELDS,
}


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The issue tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def my_id() -> int | None:
        user = await client.check_key()
        uid = user.get("id")
        return uid if isinstance(uid, int) else None

    async def with_numbers(fields: dict[str, Any]) -> dict[str, Any]:
        # Identifiers work for creation but not everywhere in Redmine: send the number.
        if isinstance(fields.get("project_id"), str):
            fields["project_id"] = await project_id(client, fields["project_id"])
        return fields

    async def read_issue(issue_id: int, include: str | None = None) -> dict[str, Any]:
        params = {"include": include} if include else None
        body = await client.get(f"issues/{issue_id}.json", what=f"issue {issue_id}", params=params)
        return entity_of(body, "issue")

    async def list_issues(args: dict[str, Any]) -> Any:
        offset, limit = paging(args)
        page = await client.page(
            "issues.json",
            "issues",
            what="the issue list",
            params=issue_filters(args),
            offset=offset,
            limit=limit,
        )
        return page_result(ctx, "issues", page)

    async def get_issue(args: dict[str, Any]) -> Any:
        issue_id = num(args["id"])
        include = _includes(args.get("include"), SHOW_INCLUDES, DEFAULT_SHOW)
        return entity_result(ctx, "issue", {"issue": await read_issue(issue_id, include)})

    async def create_issue(args: dict[str, Any]) -> Any:
        fields = await with_numbers(
            issue_fields(args, me=await my_id() if args.get("assigned_to") == "me" else None)
        )
        body = await client.post("issues.json", what="the new issue", json={"issue": fields})
        issue = entity_of(body, "issue")
        return done(f"Created issue {issue.get('id')}.", fmt.entity("issue", issue))

    async def update_issue(args: dict[str, Any]) -> Any:
        issue_id = num(args["id"])
        fields = await with_numbers(
            issue_fields(args, me=await my_id() if args.get("assigned_to") == "me" else None)
        )
        require_some(fields, f"issue {issue_id}")
        await client.put(f"issues/{issue_id}.json", what=f"issue {issue_id}", json={"issue": fields})
        # Redmine answers 204 with no body: read the issue back so the caller sees the result.
        issue = await read_issue(issue_id, "journals" if "notes" in fields else None)
        return done(f"Updated issue {issue_id}.", fmt.entity("issue", issue))

    async def delete_issue(args: dict[str, Any]) -> Any:
        issue_id = num(args["id"])

        async def preview() -> list[Element]:
            issue = await read_issue(issue_id, "children,attachments")
            spent = await client.page(
                "time_entries.json",
                "time_entries",
                what=f"time entries of issue {issue_id}",
                params={"issue_id": issue_id},
                limit=1,
            )
            out = Element("issue", {"id": issue_id})
            if "subject" in issue:
                out.add(fmt.text("subject", str(issue["subject"])))
            out.child("children", None, len(issue.get("children") or []))
            out.child("attachments", None, len(issue.get("attachments") or []))
            out.child("time_entries", None, spent.total_count)
            return [out]

        async def delete() -> None:
            await client.delete(f"issues/{issue_id}.json", what=f"issue {issue_id}")

        return await confirm_or_preview(args, what=f"issue {issue_id}", preview=preview, delete=delete)

    async def watchers_of(issue_id: int) -> Element:
        issue = await read_issue(issue_id, "watchers")
        return fmt.array("watchers", issue.get("watchers") or [])

    async def add_watcher(args: dict[str, Any]) -> Any:
        issue_id, user_id = num(args["issue_id"]), num(args["user_id"])
        await client.post(
            f"issues/{issue_id}/watchers.json",
            what=f"watchers of issue {issue_id}",
            json={"user_id": user_id},
        )
        return done(f"User {user_id} now watches issue {issue_id}.", await watchers_of(issue_id))

    async def remove_watcher(args: dict[str, Any]) -> Any:
        issue_id, user_id = num(args["issue_id"]), num(args["user_id"])
        await client.delete(
            f"issues/{issue_id}/watchers/{user_id}.json", what=f"watcher {user_id} of issue {issue_id}"
        )
        return done(f"User {user_id} no longer watches issue {issue_id}.", await watchers_of(issue_id))

    async def list_relations(args: dict[str, Any]) -> Any:
        issue_id = num(args["issue_id"])
        body = await client.get(f"issues/{issue_id}/relations.json", what=f"relations of issue {issue_id}")
        return list_result(ctx, "relations", list(body.get("relations") or []))

    async def create_relation(args: dict[str, Any]) -> Any:
        issue_id = num(args["issue_id"])
        relation: dict[str, Any] = {
            "issue_to_id": num(args["issue_to_id"]),
            "relation_type": args.get("relation_type") or "relates",
        }
        if relation["relation_type"] not in RELATION_TYPES:
            raise ValidationError(f"relation_type must be one of {', '.join(RELATION_TYPES)}")
        if args.get("delay") is not None:
            relation["delay"] = coerce.as_int(args["delay"], minimum=0)
        body = await client.post(
            f"issues/{issue_id}/relations.json",
            what=f"a relation of issue {issue_id}",
            json={"relation": relation},
        )
        created = entity_of(body, "relation")
        return done(f"Created relation {created.get('id')}.", fmt.entity("relation", created))

    async def delete_relation(args: dict[str, Any]) -> Any:
        rel_id = num(args["id"])

        async def preview() -> list[Element]:
            body = await client.get(f"relations/{rel_id}.json", what=f"relation {rel_id}")
            return [fmt.entity("relation", entity_of(body, "relation"))]

        async def delete() -> None:
            await client.delete(f"relations/{rel_id}.json", what=f"relation {rel_id}")

        return await confirm_or_preview(args, what=f"relation {rel_id}", preview=preview, delete=delete)

    include_list = p.array(
        p.enum("Extra data", LIST_INCLUDES), "Extra data to include: attachments, relations"
    )
    include_show = p.array(
        p.enum("Extra data", SHOW_INCLUDES),
        "Extra data; default journals, children, relations, watchers and attachments",
    )
    return [
        define(
            "list_issues",
            "List issues with filters, newest first unless sort says otherwise.\n"
            "Filters combine; status is open by default.",
            {
                "project": PROJECT,
                "status": p.string("open, closed, * for any, or a status number"),
                "tracker": ident("Tracker number"),
                "assigned_to": p.string(USER_OR_ME),
                "author": p.string(USER_OR_ME),
                "priority": ident("Priority number"),
                "parent": ident("Parent issue number"),
                "version": ident("Target version number"),
                "category": ident("Issue category number"),
                "subject": p.string("Text the subject contains"),
                "created": p.string("Created date filter such as >=2025-01-01 or ><2025-01-01|2025-01-31"),
                "updated": p.string("Updated date filter, same form as created"),
                "custom_fields": p.array(
                    p.obj(
                        {"id": ident("Custom field number"), "value": p.string("Value to match")},
                        required=["id", "value"],
                    ),
                    "Custom field filters, each a field number and the value to match",
                ),
                "sort": p.string("Sort order such as id:desc or priority:desc,id"),
                "include": include_list,
                **PAGING,
            },
            list_issues,
            category=CATEGORY,
            read_only=True,
        ),
        define(
            "get_issue",
            "Show one issue with its journals, children, relations, watchers and attachments.",
            {"id": ident("Issue number"), "include": include_show},
            get_issue,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        ),
        define(
            "create_issue",
            "Create an issue in a project. Only project and subject are required.\n"
            "Find valid numbers first with list trackers, list issue statuses and list issue priorities.",
            {
                "project": PROJECT,
                **_FIELD_SCHEMAS,
                "watcher_user_ids": p.array(ident("User number"), "Watchers"),
            },
            create_issue,
            category=CATEGORY,
            required=["project", "subject"],
        ),
        define(
            "update_issue",
            "Change fields of an issue, add a note, or move it to another project.\n"
            "Only the fields you give are changed.",
            {
                "id": ident("Issue number"),
                "project": p.string("Move to this project, by number or identifier"),
                **_FIELD_SCHEMAS,
                "notes": p.string("A note to add to the history"),
                "private_notes": p.boolean("Make the added note private"),
            },
            update_issue,
            category=CATEGORY,
            required=["id"],
        ),
        define(
            "delete_issue",
            "Delete an issue with its subtasks and time entries. Cannot be undone.\n"
            "Without confirm true it only shows what would be deleted.",
            {"id": ident("Issue number"), "confirm": CONFIRM},
            delete_issue,
            category=CATEGORY,
            required=["id"],
            destructive=True,
        ),
        define(
            "add_issue_watcher",
            "Add a user to the watchers of an issue.",
            {"issue_id": ident("Issue number"), "user_id": ident("User number")},
            add_watcher,
            category=CATEGORY,
            required=["issue_id", "user_id"],
            idempotent=True,
        ),
        define(
            "remove_issue_watcher",
            "Remove a user from the watchers of an issue.",
            {"issue_id": ident("Issue number"), "user_id": ident("User number")},
            remove_watcher,
            category=CATEGORY,
            required=["issue_id", "user_id"],
            idempotent=True,
        ),
        define(
            "list_issue_relations",
            "List the relations of an issue such as blocks, precedes or relates.",
            {"issue_id": ident("Issue number")},
            list_relations,
            category=CATEGORY,
            required=["issue_id"],
            read_only=True,
        ),
        define(
            "create_issue_relation",
            "Relate two issues. The type is read from the first issue, so blocks means it blocks the other.",
            {
                "issue_id": ident("Issue number the relation starts from"),
                "issue_to_id": ident("Issue number the relation points to"),
                "relation_type": p.enum("Kind of relation, default relates", RELATION_TYPES),
                "delay": p.integer("Days between the issues for precedes or follows", minimum=0),
            },
            create_relation,
            category=CATEGORY,
            required=["issue_id", "issue_to_id"],
        ),
        define(
            "delete_issue_relation",
            "Delete a relation between two issues by its relation number.\n"
            "Without confirm true it only shows the relation.",
            {"id": ident("Relation number"), "confirm": CONFIRM},
            delete_relation,
            category=CATEGORY,
            required=["id"],
            destructive=True,
        ),
    ]
