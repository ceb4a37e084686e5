"""The rule catalog of ``mcpkit check``: what each rule enforces and where that is written.

Every rule cites its evidence: the MCP specification text (2025-11-25 unless it says
otherwise) or the client-rules research fact behind a compat profile rule. The text goes into
``--json`` (each finding's ``evidence``) and into SARIF rule metadata (``fullDescription``,
``help``, ``helpUri``), so a user can judge a finding without trusting the checker. A rule
whose evidence is not confirmed is a warning that says so, never an error by default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from mcpkit.compat import PROFILES, get_profile

CheckSeverity = Literal["error", "warning", "info"]

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
SPEC_2026 = "https://modelcontextprotocol.io/specification/2026-07-28"
AUTH = f"{SPEC}/basic/authorization"


@dataclass(frozen=True)
class RuleInfo:
    """Metadata of one rule."""

    id: str
    level: CheckSeverity
    short: str
    evidence: str
    help_uri: str
    unconfirmed: bool = False


_CATALOG: tuple[RuleInfo, ...] = (
    # handshake
    RuleInfo(
        "server-unreachable",
        "error",
        "The server could not be started, reached or initialized",
        'Lifecycle: "The initialization phase MUST be the first interaction between client and server."',
        f"{SPEC}/basic/lifecycle#initialization",
    ),
    RuleInfo(
        "server-info-missing",
        "error",
        "initialize result has no serverInfo.name",
        "schema InitializeResult: serverInfo (Implementation, name required) is a required field.",
        f"{SPEC}/basic/lifecycle#initialization",
    ),
    RuleInfo(
        "server-version-missing",
        "warning",
        "serverInfo has no version",
        "schema Implementation: version is a required field.",
        f"{SPEC}/basic/lifecycle#initialization",
    ),
    RuleInfo(
        "protocol-not-latest",
        "info",
        "An older protocol version was negotiated",
        "Lifecycle, version negotiation: the server answers with the version it supports.",
        f"{SPEC}/basic/lifecycle#version-negotiation",
    ),
    RuleInfo(
        "slow-initialize",
        "warning",
        "initialize took more than 5 seconds",
        'Lifecycle, timeouts: "Implementations SHOULD establish timeouts for all sent requests."',
        f"{SPEC}/basic/lifecycle#timeouts",
    ),
    RuleInfo(
        "stdout-not-jsonrpc",
        "error",
        "The server wrote something that is not JSON-RPC to stdout",
        'Transports, stdio: "The server MUST NOT write anything to its stdout that is not a valid MCP message."',
        f"{SPEC}/basic/transports#stdio",
    ),
    RuleInfo(
        "ping-fails",
        "error",
        "ping is not answered with an empty result",
        'Ping: "The receiver MUST respond promptly with an empty response."',
        f"{SPEC}/basic/utilities/ping",
    ),
    # protocol: every message, and what is new in 2026-07-28
    RuleInfo(
        "message-invalid",
        "error",
        "A message does not match its revision's schema",
        "Each revision's schema.json defines every message; the checker validates with the SDK's "
        "models generated from it (mcp_types), keyed by the request a result answers.",
        f"{SPEC}/basic",
    ),
    RuleInfo(
        "stateless-not-served",
        "info",
        "The server does not serve the 2026-07-28 stateless wire",
        "2026-07-28: a client learns what a server speaks from server/discover; older servers answer "
        "it with an error, and clients fall back to initialize.",
        f"{SPEC_2026}/basic/lifecycle",
    ),
    RuleInfo(
        "handshake-not-served",
        "info",
        "The server does not answer the initialize handshake",
        "Lifecycle (2025-11-25 and older): clients start with initialize; 2026-07-28 clients use "
        "server/discover and the per-request envelope instead.",
        f"{SPEC}/basic/lifecycle#initialization",
    ),
    RuleInfo(
        "discover-versions",
        "error",
        "server/discover's supportedVersions leaves out a revision the endpoint serves",
        'schema DiscoverResult.supportedVersions: "MCP Protocol Versions this server supports. The client '
        'should choose a version from this list for use in subsequent requests."',
        f"{SPEC_2026}/basic/lifecycle",
    ),
    RuleInfo(
        "discover-omits-handshake",
        "info",
        "server/discover lists no handshake revision although the endpoint answers initialize",
        'schema DiscoverResult.supportedVersions: "MCP Protocol Versions this server supports"; a client '
        "that reads discover first learns from it whether it may fall back to initialize.",
        f"{SPEC_2026}/basic/lifecycle",
    ),
    RuleInfo(
        "eras-disagree",
        "warning",
        "The two eras of one endpoint declare different lists or list-change promises",
        "Lifecycle, capability negotiation (both revisions): a declared capability is a promise to "
        "the client; one server behind one URL makes the same promises to clients of either era.",
        f"{SPEC_2026}/basic/lifecycle",
    ),
    RuleInfo(
        "cache-ttl-long",
        "warning",
        "A caching hint keeps a result for more than a day",
        'schema CacheableResult.ttlMs: "how long (in milliseconds) the client MAY cache this response '
        'before re-fetching", like Cache-Control max-age.',
        f"{SPEC_2026}/basic/utilities/caching",
    ),
    RuleInfo(
        "cache-ttl-zero",
        "info",
        "A list declared not to change says ttlMs 0",
        'schema CacheableResult.ttlMs: "If 0, the response SHOULD be considered immediately stale"; a '
        "list without listChanged never announces a change, so a TTL saves every re-fetch.",
        f"{SPEC_2026}/basic/utilities/caching",
    ),
    RuleInfo(
        "listen-fails",
        "error",
        "listChanged is declared but subscriptions/listen does not acknowledge",
        'schema SubscriptionsAcknowledgedNotification: "MUST be the first message the server sends" on '
        "a subscriptions/listen stream; on 2026-07-28 list changes reach clients only there.",
        f"{SPEC_2026}/basic/utilities/subscriptions",
    ),
    RuleInfo(
        "listen-not-honoured",
        "warning",
        "subscriptions/listen leaves out a list change the capabilities declare",
        "schema SubscriptionsAcknowledgedNotificationParams.notifications: the subset the server agreed "
        "to honour; a declared listChanged it refuses is never delivered.",
        f"{SPEC_2026}/basic/utilities/subscriptions",
    ),
    RuleInfo(
        "envelope-not-required",
        "warning",
        "A request without the per-request envelope is answered",
        'schema RequestMetaObject: protocolVersion and clientCapabilities are "Required"; a server that '
        "does not support the requested version MUST return UnsupportedProtocolVersionError.",
        f"{SPEC_2026}/basic",
    ),
    # capabilities
    RuleInfo(
        "declared-method-fails",
        "error",
        "A declared capability's list method fails",
        "Lifecycle, capability negotiation: a server that declares a capability offers its features.",
        f"{SPEC}/basic/lifecycle#capability-negotiation",
    ),
    RuleInfo(
        "undeclared-method-served",
        "error",
        "A method of an undeclared capability answers",
        'Lifecycle, operation: "Both parties MUST only use capabilities that were successfully negotiated."',
        f"{SPEC}/basic/lifecycle#operation",
    ),
    RuleInfo(
        "undeclared-wrong-error",
        "warning",
        "A method of an undeclared capability gives an error other than -32601",
        "JSON-RPC 2.0: -32601 is 'Method not found'; the spec's error tables use it for unsupported methods.",
        f"{SPEC}/basic#responses",
    ),
    RuleInfo(
        "undeclared-method-fails",
        "warning",
        "A method of an undeclared capability does not answer",
        'Lifecycle, timeouts: requests that never answer make clients wait; "-32601 Method not found".',
        f"{SPEC}/basic/lifecycle#timeouts",
    ),
    RuleInfo(
        "logging-setlevel-fails",
        "error",
        "logging is declared but logging/setLevel fails",
        'Logging: "Servers that emit log message notifications MUST declare the logging capability"; '
        "clients set the level with logging/setLevel and get an empty result.",
        f"{SPEC}/server/utilities/logging",
    ),
    RuleInfo(
        "completion-fails",
        "error",
        "completions is declared but completion/complete fails or answers a malformed result",
        "Completion: servers that declare completions answer completion/complete with "
        "{completion: {values (at most 100), total?, hasMore?}}.",
        f"{SPEC}/server/utilities/completion",
    ),
    RuleInfo(
        "list-result-invalid",
        "error",
        "A list result does not match the MCP schema",
        "schema ListToolsResult / ListResourcesResult / ListPromptsResult / ListResourceTemplatesResult.",
        f"{SPEC}/server/utilities/pagination",
    ),
    RuleInfo(
        "pagination-broken",
        "error",
        "Following nextCursor repeats a cursor or fails",
        'Pagination: "Clients MUST treat cursors as opaque tokens"; a cursor leads to the next page '
        "and the last page has no nextCursor.",
        f"{SPEC}/server/utilities/pagination",
    ),
    RuleInfo(
        "pagination-duplicate",
        "error",
        "The same item appears on more than one page",
        "Tools: names SHOULD be unique within a server; resources are identified by URI and prompts by name.",
        f"{SPEC}/server/utilities/pagination",
    ),
    # tools
    RuleInfo(
        "tool-name-duplicate",
        "error",
        "Two tools have the same name",
        'Tools, tool names: "Tool names SHOULD be unique within a server."',
        f"{SPEC}/server/tools#tool-names",
    ),
    RuleInfo(
        "schema-invalid",
        "error",
        "inputSchema or outputSchema is not valid JSON Schema",
        "schema Tool: inputSchema and outputSchema are JSON Schema objects (2020-12 unless $schema says otherwise, SEP-1613).",
        f"{SPEC}/server/tools#tool",
    ),
    RuleInfo(
        "no-tools",
        "info",
        "The server declares no tools capability",
        "Lifecycle, capability negotiation: tools is optional.",
        f"{SPEC}/basic/lifecycle#capability-negotiation",
    ),
    # results
    RuleInfo(
        "result-invalid",
        "error",
        "A tool result does not match the MCP schema",
        "schema CallToolResult; with an outputSchema, servers MUST provide structured results that conform to it.",
        f"{SPEC}/server/tools#tool-result",
    ),
    RuleInfo(
        "unknown-tool-accepted",
        "error",
        "A call of a tool that does not exist succeeded",
        'CallToolResult.isError: "any errors in finding the tool ... should be reported as an MCP error response."',
        f"{SPEC}/server/tools#error-handling",
    ),
    RuleInfo(
        "invalid-arguments-accepted",
        "warning",
        "A call with an argument the tool's schema forbids succeeded",
        'Tools, security considerations: "Servers MUST validate all tool inputs"; the schema says '
        "additionalProperties: false.",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "invalid-arguments-not-iserror",
        "info",
        "Invalid arguments gave a JSON-RPC error rather than an isError result",
        "Tools, error handling (2025-11-25): input validation errors are tool execution errors "
        "(isError: true) so the model can correct itself.",
        f"{SPEC}/server/tools#error-handling",
    ),
    RuleInfo(
        "probe-timeout",
        "warning",
        "A probed tool did not answer within the timeout (the server was restarted)",
        'Lifecycle, timeouts: "Implementations SHOULD establish timeouts for all sent requests."',
        f"{SPEC}/basic/lifecycle#timeouts",
    ),
    RuleInfo(
        "server-crashed",
        "error",
        "The server died during a call (it was restarted)",
        "CallToolResult.isError: errors that originate from the tool SHOULD be reported inside the result.",
        f"{SPEC}/server/tools#error-handling",
    ),
    RuleInfo(
        "call-rpc-error",
        "warning",
        "A tool call answered a JSON-RPC error",
        'CallToolResult.isError: "Any errors that originate from the tool SHOULD be reported inside the result object".',
        f"{SPEC}/server/tools#error-handling",
    ),
    RuleInfo(
        "call-failed",
        "error",
        "A tool call failed at the transport level",
        "Transports: every request gets a response.",
        f"{SPEC}/basic/transports",
    ),
    RuleInfo(
        "probe-is-error",
        "info",
        "The call with schema-generated arguments returned isError",
        "Informational: the generated arguments may make no sense for the tool.",
        f"{SPEC}/server/tools#error-handling",
    ),
    RuleInfo(
        "probe-skipped-write",
        "info",
        "Not called: not annotated read-only",
        "ToolAnnotations.readOnlyHint: if true, the tool does not modify its environment.",
        f"{SPEC}/server/tools#tool",
    ),
    # security
    RuleInfo(
        "auth-no-token",
        "info",
        "The server requires authorization and no token was given",
        'Authorization: "MCP servers MUST use the WWW-Authenticate header ... when returning a 401."',
        f"{AUTH}",
    ),
    RuleInfo(
        "auth-token-refused",
        "error",
        "The token given was refused",
        "Authorization: a token the authorization server issued for this resource is accepted.",
        f"{AUTH}#token-handling",
    ),
    RuleInfo(
        "auth-challenge",
        "error",
        "A 401 without a Bearer challenge that names the protected-resource metadata",
        'Authorization: "MCP servers MUST use the HTTP header WWW-Authenticate when returning a 401 '
        'Unauthorized to indicate the location of the resource server metadata URL" (RFC 9728 §5.1).',
        f"{AUTH}#authorization-server-location",
    ),
    RuleInfo(
        "auth-metadata",
        "error",
        "The protected-resource metadata is missing or malformed",
        'Authorization: "MCP servers MUST implement the OAuth 2.0 Protected Resource Metadata (RFC 9728)"; '
        "its resource is the server and authorization_servers lists at least one issuer.",
        f"{AUTH}#authorization-server-discovery",
    ),
    RuleInfo(
        "auth-server-unreachable",
        "warning",
        "An authorization server named in the metadata publishes no metadata",
        "Authorization: clients MUST support RFC 8414 and OpenID Connect discovery to find the "
        "authorization server's endpoints.",
        f"{AUTH}#authorization-server-discovery",
    ),
    RuleInfo(
        "auth-altered-token-accepted",
        "error",
        "A token with an altered signature was accepted",
        'Authorization, token handling: "MCP servers MUST validate access tokens".',
        f"{AUTH}#token-handling",
    ),
    RuleInfo(
        "auth-audience-not-checked",
        "error",
        "A token issued for another resource was accepted",
        'Authorization, token audience binding: "MCP servers MUST validate that access tokens were '
        'issued specifically for them as the intended audience" (RFC 8707).',
        f"{AUTH}#token-audience-binding-and-validation",
    ),
    RuleInfo(
        "poisoning-hidden-text",
        "error",
        "Invisible characters in a tool name or description (an error when they spell text or sit "
        "beside instructions to the model)",
        "Tools, security: descriptions are shown to the model; invisible text hides instructions from "
        "the user (tool poisoning, as reported by Invariant Labs' mcp-scan). A lone zero-width "
        "character is a warning.",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "poisoning-bidi",
        "warning",
        "Bidirectional control characters in a tool name or description (an error beside instructions)",
        "Bidi controls make text read differently by a user and a model (Trojan Source, CVE-2021-42574).",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "poisoning-instructions",
        "error",
        "A description gives the model instructions aimed past the user",
        'Tools: "descriptions of tool behavior ... should be considered untrusted, unless obtained from '
        'a trusted server"; phrases such as "ignore previous instructions", "do not tell the user" or '
        '"read ~/.ssh/id_rsa" are tool poisoning, aimed at the model.',
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "poisoning-suspicious",
        "warning",
        "A description addresses the model (an <IMPORTANT> tag, role or system-prompt talk)",
        "Tool poisoning examples (Invariant Labs) wrap their instructions in <IMPORTANT> tags; honest "
        "descriptions use them too, so a warning unless hidden characters share the text.",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "poisoning-shadowing",
        "warning",
        "A description tells the model how to use another tool (an error for another server's tool "
        "or when it sends data elsewhere)",
        "Tool shadowing (mcp-scan): one tool's description changes how the model uses another tool.",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "secret-in-definition",
        "error",
        "A credential (API key, token, private key, password) in a tool, prompt or resource definition",
        "Definitions go to every client and are read by the model: a credential in one is disclosed to "
        "both (secret exposure, OWASP MCP Top 10). The spec's security best practices: tokens are "
        "never passed through or shared.",
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/security_best_practices",
    ),
    RuleInfo(
        "tool-count-over-limit",
        "warning",
        "More tools than a client without a profile takes (Windsurf: 100)",
        "client-rules row 3: Windsurf/Cascade has a limit of 100 total tools; the user must turn "
        "tools off (docs.windsurf.com/windsurf/cascade/mcp, confirmed through mirrored copies).",
        "https://docs.windsurf.com/windsurf/cascade/mcp",
    ),
    RuleInfo(
        "origin-not-checked",
        "error",
        "The HTTP server accepted a request with a foreign Origin",
        'Transports, streamable HTTP security: "Servers MUST validate the Origin header on all incoming '
        'connections ... If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."',
        f"{SPEC}/basic/transports#security-warning",
    ),
    RuleInfo(
        "host-not-checked",
        "error",
        "The HTTP server accepted a request with a foreign Host (DNS rebinding)",
        "Security best practices, local MCP server compromise: a rebound page reaches a local server "
        "under the attacker's name, and a request without Origin is judged by its Host alone; the SDKs "
        "check allowed hosts (GHSA-w48q-cv73-mx4w) and the conformance suite's DNS rebinding scenario "
        "sends a foreign Host.",
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/security_best_practices",
    ),
    RuleInfo(
        "tool-added",
        "warning",
        "A tool appeared since the baseline",
        "Rug pull (mcp-scan): approve new tools before a model uses them.",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "tool-removed",
        "info",
        "A tool disappeared since the baseline",
        "Baseline comparison.",
        f"{SPEC}/server/tools#security-considerations",
    ),
    RuleInfo(
        "tool-changed",
        "error",
        "A tool's definition changed since the baseline",
        "Rug pull (mcp-scan): a definition that changes after approval can redirect the model.",
        f"{SPEC}/server/tools#security-considerations",
    ),
)
CATALOG: dict[str, RuleInfo] = {r.id: r for r in _CATALOG}


@cache
def compat_rules() -> dict[str, RuleInfo]:
    """Rule metadata for every compat profile rule, from its citation and summary."""
    out: dict[str, RuleInfo] = {}
    for profile in PROFILES:
        for rule in get_profile(profile).rules:
            if rule.id in out:
                continue
            unconfirmed = any(w in rule.summary.lower() for w in ("unconfirmed", "not confirmed"))
            out[rule.id] = RuleInfo(
                rule.id,
                "warning" if unconfirmed else rule.severity,
                f"{rule.client}: {rule.summary.split('. ')[0].rstrip('.')}",
                f"{rule.summary} Source: {rule.citation}.",
                _citation_uri(rule.citation),
                unconfirmed=unconfirmed,
            )
    return out


def info(rule: str) -> RuleInfo:
    """The metadata of ``rule`` (a generic entry for an id the catalog does not know)."""
    found = CATALOG.get(rule) or compat_rules().get(rule)
    return found or RuleInfo(rule, "warning", rule.replace("-", " "), "", f"{SPEC}/server/tools")


_ISSUE = re.compile(r"\b([\w.-]+)/([\w.-]+)#(\d+)")
_TLDS = {"com", "org", "io", "ai", "dev", "net", "jp", "bot", "app"}
_DOMAIN = re.compile(r"\b((?:[\w-]+\.)+[a-z]{2,}(?:/[^\s;,)]*)?)")


def _citation_uri(citation: str) -> str:
    """A link for a citation: the first GitHub issue or web address it names."""
    issue = _ISSUE.search(citation)
    if issue:
        return f"https://github.com/{issue.group(1)}/{issue.group(2)}/issues/{issue.group(3)}"
    for domain in _DOMAIN.finditer(citation):
        host = domain.group(1).split("/")[0]
        if host.rsplit(".", 1)[-1] in _TLDS:
            return "https://" + domain.group(1)
    return f"{SPEC}/server/tools"
