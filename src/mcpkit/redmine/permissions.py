"""What the key's user may do in a project, known *before* a write that Redmine would quietly change.

Redmine drops a field the role may not set and still answers 204: a Reporter's note sent with
``private_notes: true`` was stored as a *public* note, readable by everyone on the project,
and the check after the write could only report the harm; a Reporter's note sent with a status
change was stored while the status was dropped (the role lacks ``edit_issues``), so a retry
posted the note twice. So a write carrying such a field asks first: the user's memberships
(``/users/current.json?include=memberships``) and the permissions of each role
(``/roles/N.json``, readable by every user), and a write the role cannot make in full is
refused before anything is sent, in one line naming the missing permission (in the words of
:mod:`mcpkit.redmine.rights`, which also names the permission of every 403).

Both are remembered for :data:`PERMISSION_SECONDS` per key, so a burst of writes asks once;
a role changed by an administrator in that window is still caught by the check after the
write. An administrator may do everything. A user who is no member of the project gets the
built-in "Non member" role there, which the API does not identify, so a write that would expose
something is refused as unconfirmed rather than guessed; one whose harm is a field not applied
(a :class:`Need` that is not ``strict``) is sent, and the check after the write reports it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.redmine.api import RedmineClient, RedmineError

PERMISSION_SECONDS = 60.0


@dataclass(frozen=True)
class Need:
    """A field of a write and the permissions any one of which lets Redmine keep it.

    ``harm`` says what Redmine would do with the field without them ("store the note as public").
    """

    field: str
    permissions: tuple[str, ...]
    harm: str
    strict: bool = True
    """Refuse also when the permission cannot be confirmed (no membership the API shows); a need
    whose harm the check after the write reports in full (a field not applied) is not strict."""


@dataclass
class _Known:
    until: float
    admin: bool
    roles: dict[int, list[int]]  # project id -> role ids


def _cache(client: RedmineClient) -> dict[str, Any]:
    cache = client.reference_cache.setdefault("permissions", {})
    assert isinstance(cache, dict)
    return cache


async def _membership(client: RedmineClient) -> _Known:
    cache = _cache(client)
    known = cache.get("me")
    if isinstance(known, _Known) and time.monotonic() < known.until:
        return known
    user = await client.check_key()
    roles: dict[int, list[int]] = {}
    admin = bool(user.get("admin"))
    if not admin:
        body = await client.get(
            "users/current.json", what="the memberships of the key's user", params={"include": "memberships"}
        )
        me = body.get("user")
        me = me if isinstance(me, Mapping) else {}
        for member in me.get("memberships") or []:
            project = member.get("project") if isinstance(member, Mapping) else None
            if not isinstance(project, Mapping) or not isinstance(project.get("id"), int):
                continue
            ids = [r.get("id") for r in member.get("roles") or [] if isinstance(r, Mapping)]
            roles.setdefault(project["id"], []).extend(i for i in ids if isinstance(i, int))
    known = _Known(time.monotonic() + PERMISSION_SECONDS, admin, roles)
    cache["me"] = known
    return known


async def _role_permissions(client: RedmineClient, role_id: int) -> frozenset[str]:
    cache = _cache(client)
    key = f"role {role_id}"
    hit = cache.get(key)
    if isinstance(hit, tuple) and time.monotonic() < hit[0]:
        return frozenset(hit[1])
    body = await client.get(f"roles/{role_id}.json", what=f"role {role_id}")
    role = body.get("role")
    role = role if isinstance(role, Mapping) else {}
    perms = frozenset(str(p) for p in role.get("permissions") or [])
    cache[key] = (time.monotonic() + PERMISSION_SECONDS, perms)
    return perms


async def project_permissions(client: RedmineClient, project_id: int) -> frozenset[str] | None:
    """The permissions of the key's user in ``project_id``: ``None`` for an administrator (all of them).

    A user with no membership there gets an empty set (see the module note on "Non member")."""
    known = await _membership(client)
    if known.admin:
        return None
    out: set[str] = set()
    for role_id in dict.fromkeys(known.roles.get(project_id, [])):
        out |= await _role_permissions(client, role_id)
    return frozenset(out)


async def require(client: RedmineClient, project_id: object, needs: Sequence[Need]) -> None:
    """Refuse, before anything is sent, a write with a field the user's roles would make Redmine drop.

    ``project_id`` is the project's number as Redmine showed it (anything else is unconfirmable)."""
    if not needs:
        return
    if not isinstance(project_id, int):
        project_id = -1
    try:
        allowed = await project_permissions(client, project_id)
    except RedmineError as exc:
        fields = ", ".join(n.field for n in needs)
        raise RedmineError(
            f"Nothing was sent: the permissions for {fields} could not be read ({exc}); retry"
        ) from None
    if allowed is None:
        return
    known = await _membership(client)
    from mcpkit.redmine.rights import named  # its table loads when a refusal is worded, not at start-up

    for need in needs:
        if allowed.isdisjoint(need.permissions):
            where = f"project {project_id}"
            if project_id not in known.roles and not need.strict:
                continue
            if project_id not in known.roles:
                why = f"the key's user is no member of {where}, so its permission {named(need.permissions)} cannot be confirmed"
            else:
                why = f"the key's user lacks the permission {named(need.permissions)} in {where}"
            raise RedmineError(
                f"Nothing was sent: {why}, and Redmine would {need.harm}; leave out {need.field}, "
                "or ask an administrator for a role with that permission",
                status=403,
            )


def forget(client: RedmineClient) -> None:
    """Drop what is remembered (a test that changes a role, or a membership just added)."""
    client.reference_cache.pop("permissions", None)
