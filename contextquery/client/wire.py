"""Wire facts shared by the agent side and the server (SPEC §1, §4.5, §5).

Plain constants and one pure function, no imports: the server imports them
from here, so the two sides cannot drift apart.
"""

#: The internal context endpoints, by name (SPEC §4.5).
CONTEXT_ENDPOINTS = {
    "path": "/internal/context/path",
    "output": "/internal/context/output",
    "meta": "/internal/context/meta",
}

#: The internal tool-gateway endpoints, by name (SPEC §7.2).
TOOL_ENDPOINTS = {
    "list": "/internal/tools/list",
    "call": "/internal/tools/call",
    "status": "/internal/tools/status",
}

#: The header that carries a context token (SPEC §4.5): the only credential of ``/internal/``.
TOKEN_HEADER = "X-Context-Token"

#: A context token is this many lowercase hex characters (SPEC §4.5).
TOKEN_HEX_CHARS = 48

#: ``kind`` values of the meta query (SPEC §4.5); ``ALL`` is the default.
META_KINDS = ("THINKING", "TOOL_CALLS", "TODO", "ALL")

#: Bounds of ``maxBytes`` on the output and meta queries (SPEC §4.5).
MIN_MAX_BYTES = 512
MAX_MAX_BYTES = 102400

#: The hermes-agent toolset the three context tools are registered under (SPEC §5).
TOOLSET = "workflow_context"
#: The three context tools, by their exact names (SPEC §5).
TOOL_NAMES = ("get_predecessor_paths", "get_node_output", "get_node_meta")
#: The MCP tool that reports a business tool call's status (SPEC §7.4).
STATUS_TOOL_NAME = "get_tool_call_status"
#: Names a business tool binding may not take: the MCP server's own tools (SPEC §7.1).
RESERVED_TOOL_NAMES = (*TOOL_NAMES, STATUS_TOOL_NAME)
#: Statuses of a business tool call (SPEC §7.1).
CALL_STATUSES = ("PENDING_APPROVAL", "EXECUTING", "SUCCEEDED", "FAILED", "REJECTED", "EXPIRED")


def token_mask(token: str | None) -> str:
    """The most of a token that may be shown or logged: its first 4 characters and ``***`` (SPEC §4.5)."""
    return f"{(token or '')[:4]}***"
