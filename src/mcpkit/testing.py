"""A pytest plugin for projects that build servers with mcpkit (installed as ``mcpkit``).

It turns strict mode on for the whole test run, so a tool definition that a client would reject
or crash on fails the tests instead of shipping; production servers only warn. Two ways, because
a server can be built in the test process or in a child process:

- in-process, every ``build_server`` call given no options uses the plugin's
  (:func:`mcpkit.server.set_default_options`): strict, plus whatever ``MCPKIT_TOOLS_*`` and
  ``MCPKIT_READ_ONLY`` say;
- child processes inherit ``MCPKIT_STRICT=1``, which their CLIs read.

Set ``MCPKIT_STRICT=0`` in the environment to opt out. Like a CLI, this plugin is a place where
the environment is read; the library itself only takes values.
"""

from __future__ import annotations

import os
from typing import Any

STRICT_ENV = "MCPKIT_STRICT"


def pytest_configure(config: Any) -> None:
    """Strict mode for every server built during the run, unless the environment says otherwise."""
    os.environ.setdefault(STRICT_ENV, "1")
    from mcpkit.server import ServerOptions, set_default_options

    set_default_options(ServerOptions.from_environ(os.environ))
