"""Statuses, trackers, priorities, activities and users by name where Redmine wants a number.

A model that read ``<status id="5">Closed</status>`` writes ``status: "Closed"`` far more often
than it looks the number up again, and a person says "assign it to Ann". So a parameter that
takes one of these ids also takes its name, in any case and spacing (``in progress`` is ``In
Progress``); ``me`` is the key owner. Filters keep Redmine's own words: ``open``, ``closed``
and ``*`` for a status filter mean what they mean to Redmine, not a status named Closed.

Reading arguments stays pure: :func:`ref` turns a value into a number, a kept word, or a
:class:`Named` still to be looked up; :func:`resolved` looks every :class:`Named` up against
Redmine's lists (cached per client, fetched again once before a name is called unknown).
:func:`pick` decides, and is what the property tests exercise: exactly one match is its id,
several are an error listing the candidates, none is an error listing the valid names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineError, seg
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.tools import coerce

SHOWN = 30
"""Candidates named at most in one error line."""


@dataclass(frozen=True)
class Kind:
    """One list of named ids: where Redmine lists them and the tool that shows them."""

    noun: str
    plural: str
    path: str
    key: str
    tool: str


TRACKER = Kind("tracker", "trackers", "trackers.json", "trackers", "list_trackers")
STATUS = Kind("status", "statuses", "issue_statuses.json", "issue_statuses", "list_issue_statuses")
PRIORITY = Kind(
    "priority",
    "priorities",
    "enumerations/issue_priorities.json",
    "issue_priorities",
    "list_issue_priorities",
)
ACTIVITY = Kind(
    "activity",
    "activities",
    "enumerations/time_entry_activities.json",
    "time_entry_activities",
    "list_time_entry_activities",
)
USER = Kind("user", "users", "users.json", "users", "list_users")


@dataclass(frozen=True)
class Named:
    """A name given for an id, to be looked up: ``param`` names the argument in messages."""

    kind: Kind
    text: str
    param: str


@dataclass(frozen=True)
class Candidate:
    """One thing a name may mean: ``names`` match first, ``weak`` ones (a first name) only if none does."""

    id: int
    label: str
    names: tuple[str, ...]
    weak: tuple[str, ...] = ()


_SPACING = re.compile(r"[\s_-]+")


def normal(text: str) -> str:
    """A name as compared: case folded, runs of spaces, underscores and dashes as one space."""
    return _SPACING.sub(" ", text.casefold()).strip()


def ref(value: Any, kind: Kind, param: str, *, words: Sequence[str] = ()) -> int | str | Named:
    """A number, one of ``words`` (lowercase, such as ``me`` or ``open``), or a name to look up."""
    text = " ".join(str(value).split())
    if text.lower() in words:
        return text.lower()
    try:
        return coerce.as_id(text.removeprefix("#"))
    except ValidationError:
        pass
    if not text or text.lstrip("+-").replace(".", "", 1).isdigit():
        raise ValidationError(f"{param}: {str(value)[:40]!r} is not a {kind.noun} number or name")
    return Named(kind, text, param)


def pick(named: Named, candidates: Sequence[Candidate], *, complete: bool = True) -> int:
    """The id ``named`` means among ``candidates``, or one line saying why there is none.

    ``complete`` says ``candidates`` are every valid one (then an unknown name lists them);
    otherwise they are only near matches (users Redmine found for the text)."""
    want = normal(named.text)
    hits = [c for c in candidates if want in (normal(n) for n in c.names)]
    if not hits:
        hits = [c for c in candidates if want in (normal(n) for n in c.weak)]
    unique = list({c.id: c for c in hits}.values())
    if len(unique) == 1:
        return unique[0].id
    kind = named.kind
    if unique:
        raise ValidationError(
            f"{named.param}: {named.text[:60]!r} names {len(unique)} {kind.plural}: {labels(unique)}; "
            "give the number"
        )
    if complete and candidates:
        where = f"the {kind.plural} are {labels(candidates)}"
    elif candidates:
        where = f"{kind.plural} whose names contain it: {labels(candidates)}"
    else:
        where = f"give a {kind.noun} number, see {kind.tool}"
    raise ValidationError(f"{named.param}: no {kind.noun} is named {named.text[:60]!r}; {where}")


def labels(candidates: Sequence[Candidate]) -> str:
    """``1 Bug, 2 Feature`` for a message, at most :data:`SHOWN` of them."""
    shown = ", ".join(f"{c.id} {c.label}" for c in candidates[:SHOWN])
    more = len(candidates) - SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _listed(items: Any) -> list[Candidate]:
    return [
        Candidate(int(i["id"]), str(i.get("name")), (str(i.get("name")),))
        for i in items or []
        if isinstance(i, Mapping) and isinstance(i.get("id"), int) and i.get("name") is not None
    ]


async def _list(rc: RedmineContext, kind: Kind, *, fresh: bool) -> list[Candidate]:
    cache = rc.client.reference_cache
    key = "names " + kind.path
    if fresh or not isinstance(cache.get(key), list):
        body = await rc.client.get(kind.path, what=f"the {kind.plural}")
        cache[key] = _listed(body.get(kind.key))
    found = cache[key]
    return found if isinstance(found, list) else []


def user_candidate(user: Mapping[str, Any]) -> Candidate | None:
    """A user as Redmine lists it: login, full name either way round and mail; first or last name weakly."""
    if not isinstance(user.get("id"), int):
        return None
    first, last = str(user.get("firstname") or ""), str(user.get("lastname") or "")
    full = str(user.get("name") or f"{first} {last}").strip()
    login = str(user.get("login") or "")
    names = tuple(n for n in (login, full, f"{last} {first}", str(user.get("mail") or "")) if n.strip())
    label = f"{full} ({login})" if login else full
    return Candidate(int(user["id"]), label, names, tuple(n for n in (first, last) if n))


MEMBER_PROJECTS = 50
"""Projects whose members a key that may not list users searches, when no project is at hand."""
DETAILS_AT_ONCE = 8
"""Member records read from Redmine at the same time."""


async def _users(rc: RedmineContext, named: Named, project: Any) -> tuple[list[Candidate], bool, str]:
    """Users the name may mean, whether they are every valid one (members the key can see), and
    what a refusal should add about where they were looked for."""
    try:
        body = await rc.client.get("users.json", what="the users", params={"name": named.text, "limit": 100})
        listed = [user_candidate(u) for u in body.get("users") or [] if isinstance(u, Mapping)]
        return [c for c in listed if c is not None], False, ""
    except RedmineError as exc:
        if exc.status not in (401, 403):
            raise
    # Only administrators may list users. Any key may read the members of its projects and each
    # member's record (login, names, and the mail unless the user hides it): those are searched.
    own = await _own(rc)
    projects, mine = ([project], 1) if project is not None else await _my_projects(rc)
    members = await _members(rc, projects)
    found = await _candidates(rc, members, fresh=False)
    if pick_or_none(named, [*found, *([own] if own else [])]) is None and members:
        found = await _candidates(rc, members, fresh=True)  # renamed since their records were read?
    if own is not None:  # my/account shows the key's own mail, which users/ID may hide
        found = [c for c in found if c.id != own.id] + [own]
    note = ""
    if mine > len(projects):
        note = (
            f"; looked among the members of {len(projects)} of your {mine} projects, "
            "give project to look among its members"
        )
    return found, True, note


async def _own(rc: RedmineContext) -> Candidate | None:
    """The key's user as a candidate, from ``my/account.json`` (cached per client)."""
    cache = rc.client.reference_cache
    if not isinstance(cache.get("my account"), Mapping):
        cache["my account"] = entity_of_user(await rc.client.get("my/account.json", what="your account"))
    return user_candidate(cache["my account"])


def entity_of_user(body: Mapping[str, Any]) -> dict[str, Any]:
    user = body.get("user")
    return dict(user) if isinstance(user, Mapping) else {}


async def _my_projects(rc: RedmineContext) -> tuple[list[Any], int]:
    """The first :data:`MEMBER_PROJECTS` projects the key's user is a member of, and how many there are."""
    me = await rc.client.get("users/current.json", what="your memberships", params={"include": "memberships"})
    user = me.get("user")
    ids: list[Any] = []
    for membership in (user.get("memberships") if isinstance(user, Mapping) else None) or []:
        place = membership.get("project") if isinstance(membership, Mapping) else None
        if isinstance(place, Mapping) and isinstance(place.get("id"), int):
            ids.append(place["id"])
    unique = list(dict.fromkeys(ids))
    return unique[:MEMBER_PROJECTS], len(unique)


async def _members(rc: RedmineContext, projects: Sequence[Any]) -> dict[int, str]:
    """Every user who is a member of ``projects``: id and full name (groups left out)."""
    found: dict[int, str] = {}
    for project in projects:
        offset = 0
        while offset < 10_000:
            page = await rc.client.page(
                f"projects/{seg(project)}/memberships.json",
                "memberships",
                what=f"the members of project {project}",
                offset=offset,
                limit=100,
            )
            for member in page.items:
                user = member.get("user")
                if isinstance(user, Mapping) and isinstance(user.get("id"), int):
                    found[int(user["id"])] = str(user.get("name"))
            offset += 100
            if offset >= page.total_count:
                break
    return found


async def _member(rc: RedmineContext, uid: int, name: str, *, fresh: bool) -> Candidate:
    """A member as a candidate from their own record (cached per client), or by full name alone
    where the record cannot be read."""
    cache = rc.client.reference_cache.setdefault("member users", {})
    if fresh or uid not in cache:
        try:
            record = (await rc.client.get(f"users/{uid}.json", what=f"user {uid}")).get("user")
        except RedmineError as exc:
            if exc.status not in (403, 404):
                raise
            record = None
        candidate = user_candidate(record) if isinstance(record, Mapping) else None
        cache[uid] = candidate or Candidate(uid, name, (name,))
    found = cache[uid]
    return found if isinstance(found, Candidate) else Candidate(uid, name, (name,))


async def _candidates(rc: RedmineContext, members: Mapping[int, str], *, fresh: bool) -> list[Candidate]:
    """Each member as a :class:`Candidate`, their records read :data:`DETAILS_AT_ONCE` at a time."""
    out: dict[int, Candidate] = {}
    failed: list[Exception] = []
    limiter = anyio.CapacityLimiter(DETAILS_AT_ONCE)

    async def one(uid: int, name: str) -> None:
        async with limiter:
            try:
                out[uid] = await _member(rc, uid, name, fresh=fresh)
            except Exception as exc:  # raised below as itself, not inside an exception group
                failed.append(exc)

    async with anyio.create_task_group() as group:
        for uid, name in members.items():
            group.start_soon(one, uid, name)
    if failed:
        raise failed[0]
    return [out[uid] for uid in members]


def pick_or_none(named: Named, candidates: Sequence[Candidate]) -> int | None:
    """:func:`pick`, with ``None`` where it would refuse."""
    try:
        return pick(named, candidates)
    except ValidationError:
        return None


async def lookup(rc: RedmineContext, named: Named, project: Any = None) -> int:
    """The id ``named`` means; a list fetched before is fetched again once before a name is unknown."""
    if named.kind is USER:
        users, complete, note = await _users(rc, named, project)
        try:
            return pick(named, users, complete=complete)
        except ValidationError as exc:
            raise ValidationError(f"{exc}{note}") from None
    listed = await _list(rc, named.kind, fresh=False)
    if pick_or_none(named, listed) is None and not any(
        normal(named.text) in (normal(n) for n in c.names) for c in listed
    ):
        listed = await _list(rc, named.kind, fresh=True)  # created since it was read?
    return pick(named, listed)


async def resolved(rc: RedmineContext, values: Mapping[str, Any], project: Any = None) -> dict[str, Any]:
    """``values`` with every :class:`Named` replaced by its id (``project`` narrows user names)."""
    out = dict(values)
    for key, value in values.items():
        if isinstance(value, Named):
            out[key] = await lookup(rc, value, project)
    return out


async def lookup_ref(rc: RedmineContext, value: Any, project: Any = None) -> Any:
    """``value`` itself, or the id it names when it is a :class:`Named`."""
    return await lookup(rc, value, project) if isinstance(value, Named) else value
