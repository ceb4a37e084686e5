"""A child process's own peak memory, unpolluted by its parent's.

``ru_maxrss`` (``wait4``, ``getrusage``) survives ``exec``: a child forked from a pytest worker
that holds 700 MB reports 700 MB whatever it does itself, so a memory bound measured that way
fails under the whole suite and passes alone. ``VmHWM`` in ``/proc/self/status`` belongs to the
address space, which ``exec`` replaces: the child reports it at exit.
"""

from __future__ import annotations

import sys
from pathlib import Path

ENV_PEAK_FILE = "MCPKIT_TEST_PEAK_FILE"
ENV_CPU_SECONDS = "MCPKIT_TEST_CPU_SECONDS"

_RUNNER = """
import atexit, os, resource, runpy, sys

def _report():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                with open(os.environ["MCPKIT_TEST_PEAK_FILE"], "w") as out:
                    out.write(line.split()[1])

atexit.register(_report)
cpu = int(os.environ.get("MCPKIT_TEST_CPU_SECONDS") or 0)
if cpu:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
module = sys.argv[1]
sys.argv = [module, *sys.argv[2:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def module_command(module: str, *args: str) -> list[str]:
    """``python -m MODULE ARGS`` that writes its peak RSS (KiB) to ``$MCPKIT_TEST_PEAK_FILE`` at
    exit and, with ``$MCPKIT_TEST_CPU_SECONDS``, runs under that CPU-time limit."""
    return [sys.executable, "-c", _RUNNER, module, *args]


def read_peak_kb(path: Path) -> int:
    """What the child wrote; a child killed before exit wrote nothing (then: no measure)."""
    text = path.read_text().strip() if path.exists() else ""
    if not text:
        raise AssertionError("the child wrote no peak memory: it did not exit normally")
    return int(text)


def vmhwm_kb() -> int:
    """This process's peak RSS since its exec, in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/self/status")
