"""The workflow tools over MCP: ``python -m contextquery.client.mcp_server [--http [--port N]]`` (SPEC §5, §7.4).

* stdio (default): one process per visit, as hermes-agent spawns it per
  request; the context comes from ``HERMES_CONTEXT_BASE_URL``,
  ``HERMES_CONTEXT_TOKEN``, ``HERMES_CONTEXT_RUN_ID`` and
  ``HERMES_CONTEXT_VISIT_UUID``.
* streamable HTTP (``--http``): binds 127.0.0.1 (port ``--port``, default
  8765) at ``/mcp``; the base URL comes from ``HERMES_CONTEXT_BASE_URL`` and
  the rest from each request's headers (``X-Context-Token``,
  ``X-Context-Run-Id``, ``X-Context-Visit-Uuid``), so one server serves many
  visits and no token is written to a config file.

The three context tools, with the names, parameters and answers of
:mod:`contextquery.client.context_tools` (each visit keeps its budget of 50
calls), and, when the engine gave the visit business tools (SPEC §7), those
tools — named as their bindings, with their JSON Schemas, read from
``/internal/tools/list`` when a session first lists its tools — plus
``get_tool_call_status(call_id)``. A business call goes through
``/internal/tools/call`` (:mod:`contextquery.client.business_tools`); one that
waits for a person answers "queued for approval as call N; ask
get_tool_call_status later". The business services' secrets never reach this
process. Uses the official ``mcp`` SDK (FastMCP), the version
``hermes-agent[mcp]`` pins.
"""

import argparse
import collections
import contextvars
import hashlib
import os
import sys
import threading
from typing import Annotated

import anyio
from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from pydantic import Field

from contextquery.client import business_tools, context_tools
from contextquery.client.mcp_config import hermes_mcp_config
from contextquery.client.wire import STATUS_TOOL_NAME, TOOL_NAMES

SERVER_NAME = "hermes-context"
DEFAULT_HTTP_PORT = 8765
ENV_VARS = ("HERMES_CONTEXT_BASE_URL", "HERMES_CONTEXT_TOKEN", "HERMES_CONTEXT_RUN_ID", "HERMES_CONTEXT_VISIT_UUID")
HEADERS = {"token": "x-context-token", "run_id": "x-context-run-id", "visit_uuid": "x-context-visit-uuid"}
# Visits whose call budgets an HTTP server remembers; the oldest is forgotten first.
MAX_TRACKED_VISITS = 1024


def config_from_env(environ=os.environ) -> context_tools.ContextQueryConfig:
    """The stdio context from the ``HERMES_CONTEXT_*`` variables; ``ValueError`` names a missing one."""
    missing = [name for name in ENV_VARS if not environ.get(name, "").strip()]
    if missing:
        raise ValueError(f"{', '.join(missing)} must be set for the stdio MCP server.")
    return context_tools.ContextQueryConfig(
        base_url=environ["HERMES_CONTEXT_BASE_URL"].strip(),
        token=environ["HERMES_CONTEXT_TOKEN"].strip(),
        run_id=environ["HERMES_CONTEXT_RUN_ID"].strip(),
        visit_uuid=environ["HERMES_CONTEXT_VISIT_UUID"].strip(),
    )


class _Budgets:
    """One :class:`context_tools.CallBudget` per visit (keyed by a hash, never the token itself)."""

    def __init__(self):
        self._budgets: collections.OrderedDict[str, context_tools.CallBudget] = collections.OrderedDict()
        self._lock = threading.Lock()

    def for_config(self, config: context_tools.ContextQueryConfig) -> context_tools.CallBudget:
        key = _config_key(config)
        with self._lock:
            budget = self._budgets.get(key)
            if budget is None:
                budget = self._budgets[key] = context_tools.CallBudget()
                while len(self._budgets) > MAX_TRACKED_VISITS:
                    self._budgets.popitem(last=False)
            return budget


def _config_key(config: context_tools.ContextQueryConfig) -> str:
    return hashlib.sha256(
        "\0".join((config.base_url, config.token, config.run_id, config.visit_uuid)).encode()
    ).hexdigest()


class _Catalogs:
    """The business tools of each visit, read once from ``/internal/tools/list``
    (keyed by a hash, never the token itself); a failed read is not remembered."""

    def __init__(self):
        self._tools: collections.OrderedDict[str, list[dict]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def for_config(self, config: context_tools.ContextQueryConfig) -> list[dict]:
        key = _config_key(config)
        with self._lock:
            if key in self._tools:
                return self._tools[key]
        try:
            tools = business_tools.list_tools(config)
        except business_tools.ToolGatewayError:
            return []
        with self._lock:
            self._tools[key] = tools
            while len(self._tools) > MAX_TRACKED_VISITS:
                self._tools.popitem(last=False)
        return tools


def _text(text: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=text)]


def build_server(
    *,
    config: context_tools.ContextQueryConfig | None = None,
    base_url: str | None = None,
    port: int = DEFAULT_HTTP_PORT,
) -> FastMCP:
    """A FastMCP server with the three context tools and the visit's business tools.

    With ``config`` (stdio) every call uses it; otherwise (HTTP) each call
    takes ``base_url`` plus the context headers of its request.
    """
    server = FastMCP(
        SERVER_NAME,
        instructions=context_tools.system_prompt_section("en"),
        host="127.0.0.1",
        port=port,
        log_level="WARNING",
    )
    # FastMCP always answers prompt and resource requests, so it advertises
    # those capabilities and clients (hermes-agent among them) add list/read
    # utilities beside our tools. This server offers tools only.
    for request_type in (
        types.ListPromptsRequest,
        types.GetPromptRequest,
        types.ListResourcesRequest,
        types.ListResourceTemplatesRequest,
        types.ReadResourceRequest,
    ):
        server._mcp_server.request_handlers.pop(request_type, None)
    budgets = _Budgets()

    def resolve(ctx: Context) -> context_tools.ContextQueryConfig | str:
        if config is not None:
            return config
        request = getattr(ctx.request_context, "request", None)
        headers = getattr(request, "headers", None) or {}
        values = {key: (headers.get(header) or "").strip() for key, header in HEADERS.items()}
        missing = [HEADERS[key] for key, value in values.items() if not value]
        if missing or not base_url:
            return (
                "Context query is not available: this MCP connection did not send the workflow context headers "
                "(X-Context-Token, X-Context-Run-Id, X-Context-Visit-Uuid)."
            )
        return context_tools.ContextQueryConfig(base_url=base_url, **values)

    async def call(ctx: Context, name: str, **kwargs) -> str:
        resolved = resolve(ctx)
        if isinstance(resolved, str):
            return resolved

        def run():
            with context_tools.bind(resolved, budget=budgets.for_config(resolved)):
                return context_tools.call_tool(name, kwargs)

        # Blocking HTTP runs in a worker thread so one slow read never stalls
        # the other visits this server is answering.
        return await anyio.to_thread.run_sync(contextvars.copy_context().run, run)

    schemas = context_tools.TOOL_SCHEMAS

    def described(name: str, parameter: str) -> str:
        return schemas[name]["parameters"]["properties"][parameter]["description"]

    @server.tool(
        name="get_predecessor_paths",
        description=schemas["get_predecessor_paths"]["description"],
        structured_output=False,
    )
    async def get_predecessor_paths(ctx: Context) -> str:
        return await call(ctx, "get_predecessor_paths")

    @server.tool(name="get_node_output", description=schemas["get_node_output"]["description"], structured_output=False)
    async def get_node_output(
        ctx: Context,
        node_id: Annotated[str, Field(description=described("get_node_output", "node_id"))],
        field: Annotated[str | None, Field(description=described("get_node_output", "field"))] = None,
        iter_seq: Annotated[int | None, Field(description=described("get_node_output", "iter_seq"))] = None,
    ) -> str:
        return await call(ctx, "get_node_output", node_id=node_id, field=field, iter_seq=iter_seq)

    @server.tool(name="get_node_meta", description=schemas["get_node_meta"]["description"], structured_output=False)
    async def get_node_meta(
        ctx: Context,
        node_id: Annotated[str | None, Field(description=described("get_node_meta", "node_id"))] = None,
        visit_uuid: Annotated[str | None, Field(description=described("get_node_meta", "visit_uuid"))] = None,
        kind: Annotated[str, Field(description=described("get_node_meta", "kind"))] = "ALL",
        iter_seq: Annotated[int | None, Field(description=described("get_node_meta", "iter_seq"))] = None,
    ) -> str:
        return await call(ctx, "get_node_meta", node_id=node_id, visit_uuid=visit_uuid, kind=kind, iter_seq=iter_seq)

    # The business tools differ per visit, so listing and calling are answered
    # here, around FastMCP's own handlers for the three context tools.
    catalogs = _Catalogs()

    async def visit_business_tools(resolved) -> list[dict]:
        if isinstance(resolved, str):
            return []
        return await anyio.to_thread.run_sync(catalogs.for_config, resolved)

    async def list_tools() -> list[types.Tool]:
        tools = await server.list_tools()
        business = await visit_business_tools(resolve(server.get_context()))
        if not business:
            return tools
        tools += [
            types.Tool(
                name=tool["name"], description=business_tools.tool_description(tool), inputSchema=tool["inputSchema"]
            )
            for tool in business
        ]
        tools.append(
            types.Tool(
                name=STATUS_TOOL_NAME,
                description=business_tools.STATUS_TOOL_DESCRIPTION,
                inputSchema=business_tools.STATUS_TOOL_SCHEMA,
            )
        )
        return tools

    async def call_tool(name: str, arguments: dict):
        if name in TOOL_NAMES:
            return await server.call_tool(name, arguments)
        resolved = resolve(server.get_context())
        if isinstance(resolved, str):
            return _text(resolved)
        if name == STATUS_TOOL_NAME:
            unknown = sorted(set(arguments) - {"call_id"})
            if unknown:
                return _text(f"The tool {STATUS_TOOL_NAME} takes only call_id, not {', '.join(unknown)}.")
            answer = await anyio.to_thread.run_sync(
                business_tools.get_tool_call_status, resolved, arguments.get("call_id")
            )
            return _text(answer)
        if name not in {tool["name"] for tool in await visit_business_tools(resolved)}:
            return _text(f"There is no tool named {name} for this node.")
        answer = await anyio.to_thread.run_sync(business_tools.call_business_tool, resolved, name, arguments)
        return _text(answer)

    server._mcp_server.list_tools()(list_tools)
    server._mcp_server.call_tool(validate_input=False)(call_tool)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m contextquery.client.mcp_server", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT, help="HTTP port (default %(default)s)")
    args = parser.parse_args(argv)
    if args.http:
        base_url = os.environ.get("HERMES_CONTEXT_BASE_URL", "").strip()
        if not base_url:
            print("HERMES_CONTEXT_BASE_URL must be set for the HTTP MCP server.", file=sys.stderr)
            return 2
        if not context_tools.is_loopback_url(base_url):
            print(
                "HERMES_CONTEXT_BASE_URL must be a loopback http(s) URL (127.0.0.0/8, ::1, localhost).", file=sys.stderr
            )
            return 2
        build_server(base_url=base_url, port=args.port).run("streamable-http")
        return 0
    try:
        config = config_from_env()
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    build_server(config=config).run("stdio")
    return 0


__all__ = [
    "DEFAULT_HTTP_PORT",
    "ENV_VARS",
    "HEADERS",
    "SERVER_NAME",
    "build_server",
    "config_from_env",
    "hermes_mcp_config",
    "main",
]

if __name__ == "__main__":
    sys.exit(main())
