"""Configuration from the environment: every problem is one line naming the variable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.redmine.config import DEFAULT_TEXT_LIMIT, DEFAULT_TIMEOUT, RedmineConfig, RedmineConfigError

KEY = "0123456789abcdef0123456789abcdef01234567"


def env(**extra: str) -> dict[str, str]:
    return {"REDMINE_URL": "https://redmine.example.com/", "REDMINE_API_KEY": KEY, **extra}


def test_defaults() -> None:
    cfg = RedmineConfig.from_environ(env())
    assert cfg.url == "https://redmine.example.com"
    assert cfg.read_only is False and cfg.verify_ssl is True
    assert cfg.timeout == DEFAULT_TIMEOUT and cfg.text_limit == DEFAULT_TEXT_LIMIT
    assert KEY not in repr(cfg)


def test_host_alias() -> None:
    cfg = RedmineConfig.from_environ({"REDMINE_HOST": "http://127.0.0.1:3000", "REDMINE_API_KEY": KEY})
    assert cfg.url == "http://127.0.0.1:3000"


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"REDMINE_API_KEY": KEY}, "REDMINE_URL"),
        ({"REDMINE_URL": "ftp://x", "REDMINE_API_KEY": KEY}, "REDMINE_URL"),
        ({"REDMINE_URL": "https://u:p@x", "REDMINE_API_KEY": KEY}, "REDMINE_URL"),
        ({"REDMINE_URL": "https://x"}, "REDMINE_API_KEY"),
        ({"REDMINE_URL": "https://x", "REDMINE_API_KEY": "  "}, "REDMINE_API_KEY"),
        ({"REDMINE_URL": "https://x", "REDMINE_API_KEY": "has space inside it"}, "REDMINE_API_KEY"),
        (env(REDMINE_TIMEOUT="soon"), "REDMINE_TIMEOUT"),
        (env(REDMINE_TIMEOUT="-1"), "REDMINE_TIMEOUT"),
        (env(REDMINE_READ_ONLY="perhaps"), "REDMINE_READ_ONLY"),
        (env(REDMINE_VERIFY_SSL="2"), "REDMINE_VERIFY_SSL"),
        (env(REDMINE_CA_BUNDLE="/nonexistent/ca.pem"), "REDMINE_CA_BUNDLE"),
        (env(REDMINE_ATTACHMENTS_DIR="/nonexistent/dir"), "REDMINE_ATTACHMENTS_DIR"),
        (env(REDMINE_TEXT_LIMIT="5"), "REDMINE_TEXT_LIMIT"),
    ],
)
def test_bad_settings_name_the_variable(variables: dict[str, str], named: str) -> None:
    with pytest.raises(RedmineConfigError) as info:
        RedmineConfig.from_environ(variables)
    message = str(info.value)
    assert named in message
    assert "\n" not in message


@settings(max_examples=200, deadline=None)
@given(key=st.text(min_size=1, max_size=150))
def test_a_malformed_key_is_never_echoed(key: str) -> None:
    try:
        cfg = RedmineConfig.from_environ({"REDMINE_URL": "https://x", "REDMINE_API_KEY": key})
    except RedmineConfigError as exc:
        if len(key.strip()) >= 4:
            assert key.strip() not in str(exc)
        assert "REDMINE_API_KEY" in str(exc)
    else:
        assert cfg.api_key == key.strip()


def test_paths_and_flags(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked here")
    cfg = RedmineConfig.from_environ(
        env(
            REDMINE_READ_ONLY="yes",
            REDMINE_VERIFY_SSL="false",
            REDMINE_CA_BUNDLE=str(ca),
            REDMINE_ATTACHMENTS_DIR=str(tmp_path),
            REDMINE_TIMEOUT="2.5",
            REDMINE_TEXT_LIMIT="500",
        )
    )
    assert cfg.read_only and not cfg.verify_ssl
    assert cfg.ca_bundle == ca.resolve() and cfg.attachments_dir == tmp_path.resolve()
    assert cfg.timeout == 2.5 and cfg.text_limit == 500


@pytest.mark.parametrize(
    ("variables", "named"),
    [({"REDMINE_URL": "http://127.0.0.1:9"}, "REDMINE_API_KEY"), ({"REDMINE_API_KEY": KEY}, "REDMINE_URL")],
)
def test_mcp_exits_2_before_any_traffic(variables: dict[str, str], named: str) -> None:
    """A real child process: one line on stderr naming the variable, nothing on stdout, exit 2."""
    clean = {k: v for k, v in __import__("os").environ.items() if not k.startswith("REDMINE_")}
    proc = subprocess.run(
        [sys.executable, "-m", "mcpkit.redmine", "mcp"],
        env={**clean, **variables},
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == b""
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and named in lines[0]
