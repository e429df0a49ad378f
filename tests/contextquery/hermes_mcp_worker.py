"""Subprocess helper for the hermes-agent-over-MCP test: in a fresh process
with its own ``HERMES_HOME`` (removed when it is done), write ``config.yaml`` with one ``mcp_servers``
entry, let hermes discover it, run one agent turn against the fake LLM and
print the result as JSON on the last line.

Input (JSON on stdin): ``{server_name, server_config, llm_base_url, message}``.
"""

import json
import os
import shutil
import sys
import tempfile

import yaml


def main():
    job = json.load(sys.stdin)
    home = tempfile.mkdtemp(prefix="hermes-home-mcp-")
    os.environ["HERMES_HOME"] = home
    with open(os.path.join(home, "config.yaml"), "w") as fh:
        yaml.safe_dump({"mcp_servers": {job["server_name"]: job["server_config"]}}, fh)
    from run_agent import AIAgent
    from tools.mcp_tool import discover_mcp_tools, shutdown_mcp_servers

    try:
        registered = discover_mcp_tools()
        agent = AIAgent(
            base_url=job["llm_base_url"],
            api_key="sk-fake",
            model="fake-model",
            enabled_toolsets=[f"mcp-{job['server_name']}"],
            quiet_mode=True,
            skip_context_files=True,
            skip_memory=True,
            tool_delay=0.0,
            max_iterations=8,
        )
        tools = sorted(t["function"]["name"] for t in agent.tools)
        result = agent.run_conversation(job["message"])
    finally:
        shutdown_mcp_servers()
        shutil.rmtree(home, ignore_errors=True)
    print(
        json.dumps(
            {
                "registered": sorted(registered),
                "tools": tools,
                "final": result.get("final_response"),
                "completed": result.get("completed"),
            }
        )
    )


if __name__ == "__main__":
    main()
