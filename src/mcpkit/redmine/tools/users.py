"""User tools: list, show, create, update, delete, and the key owner's account."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.args import as_given, as_text, includes, num, present
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.resource import (
    Count,
    Resource,
    delete_tool,
    include_schema,
    list_tool,
    read,
    update_record,
)
from mcpkit.redmine.tools.results import done_entity, entity_of, entity_result
from mcpkit.redmine.tools.schemas import as_in_create, ident
from mcpkit.redmine.tools.verify import verified
from mcpkit.tools import coerce
from mcpkit.tools import params as p

CATEGORY = "users"
ADMIN = "admin"  # account administration: off unless turned on (REDMINE_TOOLS=admin)
STATUSES = {"active": 1, "registered": 2, "locked": 3}
INCLUDES = ("memberships", "groups")
USER = Resource(
    "user",
    "users",
    "users/{id}",
    "users",
    paged=True,
    shown=("login", "firstname", "lastname"),
    counts=(Count("time_entries", "time_entries.json", "time_entries", lambda r: {"user_id": r["id"]}),),
    id_schema=ident("User number"),
)


def user_fields(args: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments to the body of ``{"user": ...}`` (pure)."""
    fields = present(
        args,
        {
            "login": as_text,
            "firstname": as_text,
            "lastname": as_text,
            "mail": as_text,
            "password": as_text,
            "auth_source_id": as_given,
            "mail_notification": as_text,
            "must_change_passwd": as_given,
            "generate_password": as_given,
            "admin": as_given,
        },
    )
    if args.get("status") is not None:
        fields["status"] = STATUSES[str(args["status"])]
    return fields


def user_ref(value: Any) -> int | str:
    """A user number or ``current`` for the key owner."""
    ref = coerce.as_id(value, allow=("current", "me"))
    return "current" if ref == "me" else ref if isinstance(ref, str) else num(ref)


def user_filters(args: Mapping[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if args.get("status") is not None:
        params["status"] = STATUSES[str(args["status"])]
    if args.get("name"):
        params["name"] = str(args["name"])
    if args.get("group_id") is not None:
        params["group_id"] = args["group_id"]
    return params


async def get_user(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    include = includes(args.get("include"))
    return entity_result(rc, "user", await read(rc, USER, user_ref(args["id"]), include))


async def get_my_account(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    return entity_result(
        rc, "user", entity_of(await rc.client.get("my/account.json", what="your account"), "user")
    )


async def create_user(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    fields = user_fields(args)
    if "password" not in fields and not fields.get("generate_password"):
        raise ValidationError("Give a password or set generate_password true")
    body = await rc.client.post("users.json", what="the new user", json={"user": fields})
    user = entity_of(body, "user")
    message = f"Created user {user.get('id')}."
    return await verified(rc, fields, user, message=message, success=done_entity(rc, message, "user", user))


async def update_user(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    return await update_record(rc, USER, args["id"], user_fields(args))


FIELDS: dict[str, dict[str, Any]] = {
    "login": p.string("Login name", min_length=1),
    "firstname": p.string("First name", min_length=1),
    "lastname": p.string("Last name", min_length=1),
    "mail": p.string("Email address", min_length=3),
    "password": p.string("Password of at least 8 characters", min_length=1),
    "generate_password": p.boolean("Let Redmine generate a password"),
    "must_change_passwd": p.boolean("Force a new password at next login"),
    "auth_source_id": ident("Authentication source number"),
    "mail_notification": p.enum(
        "Which emails the user gets",
        ["all", "selected", "only_my_events", "only_assigned", "only_owner", "none"],
    ),
    "admin": p.boolean("Make the user an administrator"),
    "status": p.enum("Account state", list(STATUSES)),
}

TOOLS = (
    list_tool(
        USER,
        "list_users",
        "List user accounts, filtered by state, name or group. Needs an administrator key.",
        CATEGORY,
        filters=user_filters,
        properties={
            "status": p.enum("Account state, default active", list(STATUSES)),
            "name": p.string("Text in the login, first name, last name or email"),
            "group_id": ident("Only members of this group"),
        },
        item_call="get_user with id={id}",
    ),
    redmine_tool(
        "get_user",
        "Show one user by number, or current for the key owner.",
        {
            "id": p.string("User number, or current for the key owner", min_length=1),
            "include": include_schema(INCLUDES),
        },
        get_user,
        CATEGORY,
        ("id",),
    ),
    redmine_tool(
        "get_my_account",
        "Show the account of the key owner, including preferences.",
        {},
        get_my_account,
        CATEGORY,
    ),
    redmine_tool(
        "create_user",
        "Create a user account. Needs an administrator key.\n"
        "Give login, names, email, and a password or generate password true.",
        FIELDS,
        create_user,
        ADMIN,
        ("login", "firstname", "lastname", "mail"),
        "write",
    ),
    redmine_tool(
        "update_user",
        "Change a user account; fields as in create user, only those given change. Needs an administrator key.",
        {"id": ident("User number"), **as_in_create(FIELDS)},
        update_user,
        ADMIN,
        ("id",),
        "idempotent",
    ),
    delete_tool(
        USER,
        "delete_user",
        "Delete a user account. Cannot be undone; locking the account keeps the history.\n"
        "Without confirm true it only previews.",
        ADMIN,
    ),
)
