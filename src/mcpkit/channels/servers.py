"""The one description of each server mcpkit ships: its command, its extra, what a person enters.

Everything a client needs to start a server is here and nowhere else: the registry entry, the
Claude Desktop extension, the Agent Plugin, the install links and the README lines are derived
from it (:mod:`mcpkit.channels.render`). The variables are the ones the server reads; the tests
check each against the configuration table of its application's docs, so a variable renamed in
the code and not here fails the suite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcpkit import __version__

# PyPI refuses `mcpkit`: with `.`, `_`, `-` removed, `l`/`i` read as `1` and `o` as `0`, it is
# the existing `mcp-kit`. The distribution carries the toolkit and its three applications, hence
# "suite"; the import package and the `mcpkit` command keep their names (docs/install.md).
DISTRIBUTION = "mcpkit-suite"
VERSION = __version__
# The official registry's namespace: `io.github.<account>` is proven by signing in to GitHub as
# that account when publishing (docs/install.md).
REGISTRY_NAMESPACE = "io.github.mcpkit-suite"
PYTHON_REQUIRES = ">=3.11"

Kind = Literal["string", "boolean", "number", "directory", "file"]


@dataclass(frozen=True)
class Setting:
    """One environment variable the server reads, as a person enters it."""

    env: str  # the variable, e.g. REDMINE_URL
    key: str  # its name in a form (mcpb user_config, VS Code inputs): lowercase, underscores
    title: str
    description: str
    kind: Kind = "string"
    required: bool = False
    secret: bool = False
    # What a form shows first; `${HOME}` is expanded by Claude Desktop. None: nothing.
    default: str | bool | None = None
    # What a README line or a link shows in place of the value a person must type.
    example: str = ""


@dataclass(frozen=True)
class ServerEntry:
    """One MCP server: the `mcpkit` arguments that start it over stdio, and what it needs."""

    key: str  # short name: the client's server name, the folder under packaging/
    title: str
    description: str  # at most 100 characters (the registry's limit)
    extra: str | None  # the distribution's extra that brings its dependencies
    args: tuple[str, ...]  # after `mcpkit`
    settings: tuple[Setting, ...]
    keywords: tuple[str, ...] = ()

    @property
    def registry_name(self) -> str:
        return f"{REGISTRY_NAMESPACE}/{self.key}"

    @property
    def requirement(self) -> str:
        """What `uvx --from` installs: the distribution with this server's extra."""
        return f"{DISTRIBUTION}[{self.extra}]" if self.extra else DISTRIBUTION


_LOG = Setting(
    "MCPKIT_LOG",
    "log_level",
    "Log level",
    "Log level on stderr: debug, info, warning or error.",
    default="warning",
)

ARCHIVE = ServerEntry(
    key="archive",
    title="Post archive search",
    description="Search your X, Mastodon, Bluesky and Twilog posts by meaning and by text, offline.",
    extra="archive",
    args=("archive", "mcp"),
    settings=(
        Setting(
            "MCPKIT_ARCHIVE_DB",
            "archive_db",
            "Archive database",
            "The archive file that `mcpkit archive import` writes. Until it exists every tool says "
            "how to import an export.",
            default="${HOME}/.local/share/mcpkit/archive.db",
            example="~/.local/share/mcpkit/archive.db",
        ),
        Setting(
            "MCPKIT_EMBED_URL",
            "embed_url",
            "Embedding endpoint",
            "An OpenAI-compatible endpoint, only for archives embedded with an openai: model.",
        ),
        Setting(
            "MCPKIT_EMBED_API_KEY",
            "embed_api_key",
            "Embedding endpoint key",
            "That endpoint's key, if it needs one.",
            secret=True,
        ),
    ),
    keywords=("twitter", "x", "mastodon", "bluesky", "search", "archive"),
)

REDMINE = ServerEntry(
    key="redmine",
    title="Redmine",
    description="Redmine issues, projects, time entries and wiki as MCP tools, with results that always parse.",
    extra="redmine",
    args=("redmine", "mcp"),
    settings=(
        Setting(
            "REDMINE_URL",
            "redmine_url",
            "Redmine address",
            "Your Redmine's address, http or https, for example https://redmine.example.com.",
            required=True,
            example="https://redmine.example.com",
        ),
        Setting(
            "REDMINE_API_KEY",
            "redmine_api_key",
            "API key",
            "Your key from My account, API access key, in Redmine.",
            required=True,
            secret=True,
            example="YOUR_KEY",
        ),
        Setting(
            "REDMINE_READ_ONLY",
            "read_only",
            "Read only",
            "true hides and refuses every tool that can change data.",
            kind="boolean",
            default=False,
        ),
        Setting(
            "MCPKIT_TOOLS_EXCLUDE",
            "tools_exclude",
            "Hidden tool categories",
            "Comma-separated categories to hide, for a client with a tool limit: users,memberships,versions.",
        ),
    ),
    keywords=("redmine", "issues", "project management"),
)

GATEWAY = ServerEntry(
    key="gateway",
    title="MCP gateway",
    description="Many MCP servers behind one, each tool list rewritten for the client that asks.",
    extra=None,
    args=("gateway",),
    settings=(
        Setting(
            "MCPKIT_CONFIG",
            "config",
            "Servers file",
            "The servers to put behind the gateway: mcpServers JSON or TOML, as in a client's config.",
            kind="file",
            required=True,
            example="~/.config/mcpkit/servers.json",
        ),
        _LOG,
    ),
    keywords=("gateway", "proxy", "aggregator"),
)

SERVERS: tuple[ServerEntry, ...] = (ARCHIVE, REDMINE, GATEWAY)
