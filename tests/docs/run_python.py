"""Run a python block of the docs as a reader would paste it: top-level ``await`` and ``async
with`` included (a page shows the body of an async function without the boilerplate around it).

    python tests/docs/run_python.py BLOCK.py
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import sys
from pathlib import Path


def main() -> None:
    path = Path(sys.argv[1])
    source = path.read_text(encoding="utf-8")
    code = compile(source, str(path), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, object] = {"__name__": "__main__", "__file__": str(path)}
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, namespace))
    else:
        exec(code, namespace)


if __name__ == "__main__":
    main()
