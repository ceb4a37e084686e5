"""Bulk time entries from CSV: every row checked and shown first, then all created or none.

A week of timesheet rows pasted into a conversation should not become forty create calls, and
must not end half-imported when row 23 is refused. So ``import_time_entries`` takes the CSV text
itself (a header row, then one row per entry; comma, semicolon or tab separated):

- without ``confirm`` it only previews: each row read, checked (hours, date, issue or project,
  names of activities and users resolved, required custom fields filled or named, as
  ``create_time_entry`` does for one entry) and shown with what it would create or its error;
- with ``confirm`` true and no row in error, the rows are created in order; when Redmine refuses
  one, every entry this call created is deleted again and the answer says so (and names any
  entry a deletion could not remove), so a retry never logs the same hours twice.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types

from mcpkit.errors import McpkitError, ValidationError
from mcpkit.redmine.tools import autofill
from mcpkit.redmine.tools.args import num
from mcpkit.redmine.tools.base import RedmineContext, redmine_tool
from mcpkit.redmine.tools.results import entity_of
from mcpkit.redmine.tools.time_entries import CATEGORY, numbered, time_fields
from mcpkit.redmine.xml import response
from mcpkit.results import Element, xml_result
from mcpkit.tools import params as p

MAX_ROWS = 500
"""Rows one import may carry."""
MAX_CHARS = 200_000
"""Characters of CSV text one import may carry."""
COLUMNS: dict[str, str] = {
    "issue": "issue_id",
    "issue_id": "issue_id",
    "project": "project",
    "hours": "hours",
    "activity": "activity_id",
    "activity_id": "activity_id",
    "date": "spent_on",
    "spent_on": "spent_on",
    "comments": "comments",
    "comment": "comments",
    "user": "user_id",
    "user_id": "user_id",
}
"""Header names (any case; spaces read as ``_``) to the field of ``create_time_entry`` each fills."""
_SEPARATORS = ",;\t"
_SHAPE = "give a header row such as issue,hours,activity,date,comments and one row per entry"
_SHOWN_ERRORS = 5


@dataclass
class Row:
    """One CSV row: its line, its cells by field, and what checking it found."""

    line: int
    cells: dict[str, str]
    error: str | None = None
    fields: dict[str, Any] | None = None
    created: int | None = None


def parse_rows(text: str) -> list[Row]:
    """The rows of ``text`` by field; a bad header or unreadable CSV raises one-line :class:`ValidationError`.

    A row whose cell count differs from the header's is kept with its error, so the preview
    shows it; blank lines are skipped."""
    text = text.lstrip("\ufeff")  # a byte order mark from a spreadsheet's export
    if not text.strip():
        raise ValidationError(f"csv is empty: {_SHAPE}")
    first = text.splitlines()[0]
    separator = max(_SEPARATORS, key=first.count)
    reader = csv.reader(io.StringIO(text), delimiter=separator, strict=True)
    try:
        header = [h.strip().lower().replace(" ", "_") for h in next(reader)]
        if not any(header):
            raise ValidationError(f"csv: the first line must be the header: {_SHAPE}")
        names = _columns(header)
        rows: list[Row] = []
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(rows) == MAX_ROWS:
                raise ValidationError(f"csv has more than {MAX_ROWS} rows; import it in parts")
            row = Row(
                reader.line_num, {n: c.strip() for n, c in zip(names, cells, strict=False) if c.strip()}
            )
            if len(cells) != len(names):
                row.error = f"{len(cells)} cells, but the header names {len(names)} columns"
            rows.append(row)
    except csv.Error as exc:
        raise ValidationError(f"csv cannot be read at line {reader.line_num}: {exc}") from None
    if not rows:
        raise ValidationError("csv has a header but no rows")
    return rows


def _columns(header: list[str]) -> list[str]:
    unknown = [h for h in header if h not in COLUMNS]
    if unknown:
        raise ValidationError(
            f"csv: unknown column {unknown[0][:40]!r}; the columns are {', '.join(sorted(set(COLUMNS)))}"
        )
    names = [COLUMNS[h] for h in header]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValidationError(f"csv: two columns give {twice[0]}; keep one")
    return names


async def _check(rc: RedmineContext, row: Row, known: Mapping[int, dict[str, Any]] | None) -> None:
    """Fill ``row.fields`` with the body to send, or ``row.error`` with why it cannot be."""
    if row.error:
        return
    args: dict[str, Any] = dict(row.cells)
    try:
        if "issue_id" in args:
            args["issue_id"] = num(args["issue_id"].lstrip("#"), "issue")
        fields = await numbered(rc, time_fields(args, creating=True))
        await autofill.prefill_with(rc, "time_entry", fields, known)
    except McpkitError as exc:
        row.error = str(exc)
        return
    row.fields = fields


def _row_element(row: Row) -> Element:
    out = Element("row", {"line": row.line, "status": "error" if row.error else "ready"})
    if row.created is not None:
        out.set("time_entry_id", row.created)
    for name, value in (row.fields or row.cells).items():
        out.child(name, None, value if not isinstance(value, list) else ", ".join(map(str, value)))
    if row.error:
        out.child("error", None, row.error)
    return out


def _errors_line(bad: list[Row]) -> str:
    shown = "; ".join(f"line {r.line}: {r.error}" for r in bad[:_SHOWN_ERRORS])
    more = f"; and {len(bad) - _SHOWN_ERRORS} more" if len(bad) > _SHOWN_ERRORS else ""
    return shown + more


async def import_time_entries(args: dict[str, Any], rc: RedmineContext) -> mcp_types.CallToolResult:
    rows = parse_rows(str(args["csv"]))
    known = await autofill.definitions(rc, "time_entry")
    for row in rows:
        await _check(rc, row, known)
    bad = [r for r in rows if r.error]
    if not args.get("confirm"):
        ready = len(rows) - len(bad)
        advice = (
            "fix the rows in error, then preview again"
            if bad
            else f"call again with confirm true to create all {ready}"
        )
        message = (
            f"Preview of {len(rows)} rows: {ready} ready, {len(bad)} in error. Nothing was created; {advice}."
        )
        box = Element("rows").add(*(_row_element(r) for r in rows))
        return xml_result(response(message, box, status="preview"))
    if bad:
        raise ValidationError(f"Nothing was created: {len(bad)} rows are in error: {_errors_line(bad)}")
    return await _create_all(rc, rows)


async def _create_all(rc: RedmineContext, rows: list[Row]) -> mcp_types.CallToolResult:
    """Create every row in order; on the first refusal delete what this call created and say so."""
    for row in rows:
        try:
            body = await rc.client.post(
                "time_entries.json",
                what=f"the time entry of line {row.line}",
                json={"time_entry": row.fields},
            )
            row.created = entity_of(body, "time_entry").get("id")
        except McpkitError as exc:
            done = [r for r in rows if r.created is not None]
            left = await _undo(rc, done)
            undone = (
                f"the {len(done)} entries created before it were deleted again, so nothing was imported"
                if done and not left
                else "nothing had been created before it"
                if not done
                else f"deleting entries {', '.join(map(str, left))} failed: delete them with delete_time_entry"
            )
            raise ValidationError(f"Line {row.line} was refused: {str(exc).rstrip('.')}; {undone}.") from None
    ids = ", ".join(str(r.created) for r in rows)
    box = Element("rows").add(*(_row_element(r) for r in rows))
    return xml_result(response(f"Created {len(rows)} time entries: {ids}.", box))


async def _undo(rc: RedmineContext, done: list[Row]) -> list[int]:
    """Delete the entries created; the ids that could not be deleted."""
    left: list[int] = []
    for row in reversed(done):
        assert row.created is not None
        try:
            await rc.client.delete(f"time_entries/{row.created}.json", what=f"time entry {row.created}")
        except McpkitError:
            left.append(row.created)
    return left


TOOLS = (
    redmine_tool(
        "import_time_entries",
        "Log time entries from CSV with a header row: issue or project, hours, activity, date,\n"
        "comments, user. Without confirm true only a preview; with it all rows or none.",
        {
            "csv": p.string(min_length=1, max_length=MAX_CHARS),
            "confirm": p.boolean("True to create the rows"),
        },
        import_time_entries,
        CATEGORY,
        ("csv",),
        "write",
    ),
)
