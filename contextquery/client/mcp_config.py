"""The hermes-agent ``mcp_servers`` entry for the MCP server (SPEC §5, §7.4).

Kept apart from :mod:`contextquery.client.mcp_server` so that building the entry
(the hermes runner does, for each visit) needs neither the ``mcp`` SDK nor Django;
:mod:`contextquery.client.mcp_server` re-exports :func:`hermes_mcp_config`.
"""

import os
import sys

from contextquery.client import context_tools


def hermes_mcp_config(config: context_tools.ContextQueryConfig | None = None, *, url: str | None = None) -> dict:
    """An entry of hermes-agent's ``mcp_servers`` config for this server.

    With ``config``: stdio, one process per visit, the context in its
    environment. With ``url`` (and ``config`` for the headers): streamable
    HTTP, the context in the request headers. hermes names the tools
    ``mcp__<server name>__<tool>``.
    """
    if url:
        entry = {"url": url}
        if config is not None:
            entry["headers"] = {
                "X-Context-Token": config.token,
                "X-Context-Run-Id": config.run_id,
                "X-Context-Visit-Uuid": config.visit_uuid,
            }
        return entry
    if config is None:
        raise ValueError("A stdio entry needs the visit's ContextQueryConfig.")
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {
        "command": sys.executable,
        "args": ["-m", "contextquery.client.mcp_server"],
        "env": {
            "HERMES_CONTEXT_BASE_URL": config.base_url,
            "HERMES_CONTEXT_TOKEN": config.token,
            "HERMES_CONTEXT_RUN_ID": config.run_id,
            "HERMES_CONTEXT_VISIT_UUID": config.visit_uuid,
            # hermes starts MCP servers with a scrubbed environment; the package must stay importable.
            "PYTHONPATH": package_root,
        },
    }
