"""The agent side of Hermes Ops (SPEC §5): importable without Django.

* :mod:`contextquery.client.context_tools` — the three context tools, their
  schemas and prompt section, and their registration in hermes-agent;
* :mod:`contextquery.client.mcp_server` — the same tools over MCP
  (``python -m contextquery.client.mcp_server``);
* :mod:`contextquery.client.engine` — a client for the recording API;
* :mod:`contextquery.client.hermes_runner` — one hermes-agent request per visit;
* :mod:`contextquery.client.wire` — the facts both sides share.

``pip install hermes-ops`` installs what these need (``requests``); the extras
``mcp`` and ``hermes`` add the MCP SDK and hermes-agent.
"""
