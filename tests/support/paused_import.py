"""``mcpkit archive import`` that stops in the middle of one export until it is interrupted.

A test that interrupts an import (Ctrl-C, a kill) must first see the work it interrupts in
progress: sending the signal when an earlier export's line appears races the later export,
which may be written and committed before the signal arrives (it was, once, under load). So
the test runs the real command through this module::

    python -m tests.support.paused_import big.csv archive import small.csv big.csv --db a.db

Everything is the real command, but once a batch of the export named first (``big.csv``) is
written inside its transaction, the importing thread prints ``paused in big.csv after N
records`` on stderr and waits on its stdin, which the test holds open and never writes. The
test waits for that line, then signals: the import is certainly in that export's transaction.
A SIGINT ends the wait as it would end the writing; a closed stdin lets the import go on.

The wait is a ``select`` on stdin that wakes every tenth of a second, not one blocking read:
Linux hands a process's SIGINT to any of its threads, and when it lands on the progress bar's
refresh thread a read blocked in the main thread never returns to the interpreter that would
raise ``KeyboardInterrupt`` (CI hung there for five minutes once). The wake-ups only let the
interpreter run the pending handler; nothing depends on how soon.
"""

from __future__ import annotations

import select
import sys
from pathlib import Path
from typing import Any

from mcpkit.archive.importers import flow

MARKER = "paused in"


def _pausing(name: str) -> Any:
    real = flow.import_export

    def import_export(reader: Any, path: Path, store: Any, **options: Any) -> Any:
        progress = options.get("progress")
        if Path(path).name != name:
            return real(reader, path, store, **options)

        def paused(records: int, done: int, total: int) -> None:
            if progress is not None:
                progress(records, done, total)
            if records:
                print(f"{MARKER} {name} after {records} records", file=sys.stderr, flush=True)
                while not select.select([sys.stdin], [], [], 0.1)[0]:
                    pass  # back in the interpreter: a pending SIGINT raises here
                sys.stdin.buffer.read()

        return real(reader, path, store, **{**options, "progress": paused})

    return import_export


def main(argv: list[str]) -> None:
    name, *command = argv
    flow.import_export = _pausing(name)  # read by the command when it runs
    from mcpkit.cli import app

    sys.argv = ["mcpkit", *command]
    app()


if __name__ == "__main__":
    main(sys.argv[1:])
