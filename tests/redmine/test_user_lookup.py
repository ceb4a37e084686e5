"""Users by login, first name, last name, full name and mail for any key (issue 39 point 4).

A key that may not list users (403 on ``users.json``) looks a name up among the members of the
project at hand, or of the key's own projects, reading each member's record the way Redmine
shows it to that key: the login and names always, the mail only where its owner shows it
(the key's own mail comes from ``my/account.json``). The stand-in below answers those four
endpoints as Redmine 5 does, so hypothesis can try thousands of teams; the same lookups run
against the real Redmine in tests/integration/redmine/test_redmine_names.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.errors import ValidationError
from mcpkit.redmine.api import RedmineClient
from mcpkit.redmine.config import RedmineConfig
from mcpkit.redmine.tools.base import RedmineContext
from mcpkit.redmine.tools.names import USER, Named, lookup, normal
from mcpkit.redmine.xml import Formatter

KEY = "0123456789abcdef0123456789abcdef01234567"
FIRST = st.sampled_from(["Ann", "Bo", "Chen", "Dana", "Émile", "Yūki"])
LAST = st.sampled_from(["Lee", "Smith", "Kato", "Ng", "Ann", "Ortega"])


@dataclass(frozen=True)
class User:
    id: int
    login: str
    first: str
    last: str
    mail: str
    hide_mail: bool

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    def record(self, *, mail: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "login": self.login,
            "firstname": self.first,
            "lastname": self.last,
        }
        if mail:
            out["mail"] = self.mail
        return out


@st.composite
def teams(draw: st.DrawFn) -> list[User]:
    count = draw(st.integers(1, 12) | st.just(130))  # 130: the member list takes two pages
    users = []
    for i in range(count):
        first, last = draw(FIRST), draw(LAST)
        login = f"{first[:2].lower()}{i}" if draw(st.booleans()) else f"u{i}"
        users.append(User(100 + i, login, first, last, f"{login}@example.org", draw(st.booleans())))
    return users


def stand_in(users: list[User], me: User) -> httpx2.MockTransport:
    """Redmine 5 as a non-administrator key sees it: no user list, members, member records."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path.endswith("/users.json"):
            return httpx2.Response(403)
        if path.endswith("/users/current.json"):
            body = me.record(mail=not me.hide_mail)
            body["memberships"] = [{"id": 1, "project": {"id": 7, "name": "Team"}}]
            return httpx2.Response(200, json={"user": body})
        if path.endswith("/my/account.json"):
            return httpx2.Response(200, json={"user": me.record(mail=True)})
        if path.endswith("/projects/7/memberships.json"):
            offset, limit = int(request.url.params["offset"]), int(request.url.params["limit"])
            members = [{"id": u.id, "user": {"id": u.id, "name": u.full}} for u in users]
            members.append({"id": 999, "group": {"id": 50, "name": "Everyone"}})
            page = members[offset : offset + limit]
            return httpx2.Response(200, json={"memberships": page, "total_count": len(members)})
        for u in users:
            if path.endswith(f"/users/{u.id}.json"):
                return httpx2.Response(
                    200, content=json.dumps({"user": u.record(mail=not u.hide_mail)}).encode()
                )
        return httpx2.Response(404)

    return httpx2.MockTransport(answer)


def expected(users: list[User], me: User, written: str) -> int | None:
    """What the name means: a unique login, full name (either way round) or visible mail; else a
    unique first or last name; else nothing."""
    want = normal(written)

    def strong(u: User) -> list[str]:
        names = [u.login, u.full, f"{u.last} {u.first}"]
        return names + ([u.mail] if (u is me or not u.hide_mail) else [])

    hits = {u.id for u in users if want in map(normal, strong(u))}
    if not hits:
        hits = {u.id for u in users if want in (normal(u.first), normal(u.last))}
    return hits.pop() if len(hits) == 1 else None


def styled(text: str, style: int) -> str:
    return [text, text.upper(), text.lower(), f"  {text}\t", text.replace(" ", "_")][style]


@settings(max_examples=150, deadline=None)
@given(
    users=teams(),
    data=st.data(),
    field=st.sampled_from(["login", "first", "last", "full", "reversed", "mail"]),
    style=st.integers(0, 4),
    in_project=st.booleans(),
)
def test_a_member_key_finds_users_as_redmine_shows_them(
    users: list[User], data: st.DataObject, field: str, style: int, in_project: bool
) -> None:
    me = data.draw(st.sampled_from(users))
    who = data.draw(st.sampled_from(users))
    written = {
        "login": who.login,
        "first": who.first,
        "last": who.last,
        "full": who.full,
        "reversed": f"{who.last} {who.first}",
        "mail": who.mail,
    }[field]
    written = styled(written, style)
    want = expected(users, me, written)

    async def run() -> int:
        client = RedmineClient(
            RedmineConfig(url="http://redmine.invalid", api_key=KEY), transport=stand_in(users, me)
        )
        try:
            return await lookup(
                RedmineContext(client, Formatter(500)),
                Named(USER, written, "assigned_to"),
                7 if in_project else None,
            )
        finally:
            await client.aclose()

    if want is None:
        with pytest.raises(ValidationError) as info:
            anyio.run(run)
        assert "\n" not in str(info.value) and str(info.value).startswith("assigned_to: ")
    else:
        assert anyio.run(run) == want, (written, field)
