"""User tools: list, show, create, update, delete, and the key owner's account."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.errors import ValidationError
from mcpkit.redmine.tools.base import (
    CONFIRM,
    PAGING,
    Ctx,
    as_flag,
    as_pos_int,
    as_text,
    confirm_or_preview,
    define,
    done,
    entity_of,
    entity_result,
    ident,
    num,
    page_result,
    paging,
    present,
    require_some,
)
from mcpkit.results import Element
from mcpkit.tools import ToolSpec, coerce
from mcpkit.tools import params as p

CATEGORY = "users"
STATUSES = {"active": 1, "registered": 2, "locked": 3}
INCLUDES = ("memberships", "groups")


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
            "auth_source_id": as_pos_int,
            "mail_notification": as_text,
            "must_change_passwd": as_flag,
            "generate_password": as_flag,
            "admin": as_flag,
        },
    )
    if args.get("status") is not None:
        fields["status"] = STATUSES[str(args["status"])]
    return fields


def user_ref(value: Any) -> int | str:
    """A user number or ``current`` for the key owner."""
    return coerce.as_id(value, allow=("current", "me"))


_FIELDS: dict[str, dict[str, Any]] = {
    "login": p.string("Login name", min_length=1, max_length=60),
    "firstname": p.string("First name", min_length=1, max_length=30),
    "lastname": p.string("Last name", min_length=1, max_length=255),
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


def tools(ctx: Ctx) -> list[ToolSpec]:
    """The user tools bound to ``ctx``."""
    client, fmt = ctx.client, ctx.fmt

    async def read(ref: int | str, include: str | None = None) -> dict[str, Any]:
        if ref == "me":
            ref = "current"
        params = {"include": include} if include else None
        return entity_of(await client.get(f"users/{ref}.json", what=f"user {ref}", params=params), "user")

    async def list_users(args: dict[str, Any]) -> Any:
        offset, limit = paging(args)
        params: dict[str, Any] = {}
        if args.get("status") is not None:
            params["status"] = STATUSES[str(args["status"])]
        if args.get("name"):
            params["name"] = str(args["name"])
        if args.get("group_id") is not None:
            params["group_id"] = num(args["group_id"])
        page = await client.page(
            "users.json", "users", what="the user list", params=params, offset=offset, limit=limit
        )
        return page_result(ctx, "users", page)

    async def get_user(args: dict[str, Any]) -> Any:
        include = args.get("include") or []
        if not isinstance(include, list) or any(i not in INCLUDES for i in include):
            raise ValidationError("include must be a list of: memberships, groups")
        user = await read(user_ref(args["id"]), ",".join(include) or None)
        return entity_result(ctx, "user", {"user": user})

    async def my_account(args: dict[str, Any]) -> Any:
        return entity_result(ctx, "user", await client.get("my/account.json", what="your account"))

    async def create_user(args: dict[str, Any]) -> Any:
        fields = user_fields(args)
        if "password" not in fields and not fields.get("generate_password"):
            raise ValidationError("Give a password or set generate_password true")
        body = await client.post("users.json", what="the new user", json={"user": fields})
        user = entity_of(body, "user")
        return done(f"Created user {user.get('id')}.", fmt.entity("user", user))

    async def update_user(args: dict[str, Any]) -> Any:
        uid = num(args["id"])
        fields = user_fields(args)
        require_some(fields, f"user {uid}")
        await client.put(f"users/{uid}.json", what=f"user {uid}", json={"user": fields})
        return done(f"Updated user {uid}.", fmt.entity("user", await read(uid)))

    async def delete_user(args: dict[str, Any]) -> Any:
        uid = num(args["id"])

        async def preview() -> list[Element]:
            user = await read(uid, "memberships")
            spent = await client.page(
                "time_entries.json",
                "time_entries",
                what=f"time entries of user {uid}",
                params={"user_id": uid},
                limit=1,
            )
            out = Element("user", {"id": uid, "login": user.get("login")})
            out.child("memberships", None, len(user.get("memberships") or []))
            out.child("time_entries", None, spent.total_count)
            return [out]

        async def delete() -> None:
            await client.delete(f"users/{uid}.json", what=f"user {uid}")

        return await confirm_or_preview(
            args, what=f"user {uid}; their issues and notes move to Anonymous", preview=preview, delete=delete
        )

    return [
        define(
            "list_users",
            "List user accounts, filtered by state, name or group. Needs an administrator key.",
            {
                "status": p.enum("Account state, default active", list(STATUSES)),
                "name": p.string("Text in the login, first name, last name or email"),
                "group_id": ident("Only members of this group"),
                **PAGING,
            },
            list_users,
            category=CATEGORY,
            read_only=True,
        ),
        define(
            "get_user",
            "Show one user by number, or current for the key owner.",
            {
                "id": p.string("User number, or current for the key owner", min_length=1),
                "include": p.array(p.enum("Extra data", INCLUDES), "Extra data: memberships, groups"),
            },
            get_user,
            category=CATEGORY,
            required=["id"],
            read_only=True,
        ),
        define(
            "get_my_account",
            "Show the account of the key owner, including preferences.",
            {},
            my_account,
            category=CATEGORY,
            read_only=True,
        ),
        define(
            "create_user",
            "Create a user account. Needs an administrator key.\n"
            "Give login, names, email, and a password or generate password true.",
            _FIELDS,
            create_user,
            category=CATEGORY,
            required=["login", "firstname", "lastname", "mail"],
        ),
        define(
            "update_user",
            "Change a user account. Only the fields you give are changed. Needs an administrator key.",
            {"id": ident("User number"), **_FIELDS},
            update_user,
            category=CATEGORY,
            required=["id"],
            idempotent=True,
        ),
        define(
            "delete_user",
            "Delete a user account. Cannot be undone; locking the account keeps the history.\n"
            "Without confirm true it only shows what would be deleted.",
            {"id": ident("User number"), "confirm": CONFIRM},
            delete_user,
            category=CATEGORY,
            required=["id"],
            destructive=True,
        ),
    ]
