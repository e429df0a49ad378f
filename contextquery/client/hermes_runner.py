"""Run one hermes-agent request for a workflow visit (SPEC §5, §7.4). No Django import.

:func:`visit_agent_run` builds a fresh ``AIAgent`` whose toolsets are the
caller's plus the visit's workflow tools (only when the request carries a
``context_query``): in process as the ``workflow_context`` toolset, or — with
``mcp_server`` — over MCP, where the visit's business tools (SPEC §7) are
served too. It runs the agent inside :func:`contextquery.context_tools.bind`
while a heartbeat keeps the visit alive, forwards hermes-agent's callbacks to
the recording API as visit logs (THINKING, TOOL_CALL, TOOL_RESULT), and
returns the final text with ``agentResult`` mapped from ``run_conversation``'s
result (SPEC §4.4).

Toolsets are selected by name only (:func:`toolsets_check`): hermes-agent
drops a name it does not know without a word, so a JSON tool manifest passed
where names belong would leave the agent silently without its tools; this
module refuses it with a clear error instead.

hermes-agent reads ``HERMES_HOME`` when it is imported; when it is not set,
this module points it at a throw-away folder first, so a run never touches a
real ``~/.hermes``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
import re
import tempfile
import threading

from contextquery.client import context_tools
from contextquery.client.engine import EngineClient, EngineClientError
from contextquery.client.mcp_config import hermes_mcp_config

logger = logging.getLogger("hermes_ops.hermes_runner")

#: Longest tool result or thought forwarded as a log, in characters.
MAX_LOG_CHARS = 20000


#: A hermes toolset name: ``web``, ``todo``, ``workflow_context``, ``mcp-<server>``.
TOOLSET_NAME_RE = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9_.:*-]{0,127}$")
#: An MCP server name, as hermes' ``mcp_servers`` keys are (the toolset is ``mcp-<name>``).
MCP_SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def toolsets_check(toolsets) -> list[str]:
    """``toolsets`` as a list of toolset names, or ``ValueError`` saying what is wrong (SPEC §7.4).

    Names only: a string (rather than a list), a dict, or a JSON tool manifest
    (``'[{"name": …}]'``) is refused, since hermes-agent would treat it as an
    unknown toolset and leave it out silently.
    """
    hint = (
        "toolsets takes hermes toolset names such as ['web', 'mcp-hermes_ops'], never a JSON tool manifest: "
        "hermes-agent ignores an unknown toolset without a word. Serve business tools over MCP "
        "(mcp_server=…) and select them by their toolset name."
    )
    if isinstance(toolsets, (str, bytes, dict)):
        raise ValueError(f"{hint} Got one {type(toolsets).__name__}, not a list of names.")
    names = []
    for item in toolsets:
        if not isinstance(item, str):
            raise ValueError(f"{hint} Got a {type(item).__name__} in the list.")
        if not TOOLSET_NAME_RE.fullmatch(item):
            looks = " (it looks like a JSON manifest)" if item.lstrip()[:1] in ("[", "{") else ""
            raise ValueError(f"{hint} {item[:80]!r} is not a toolset name{looks}.")
        names.append(item)
    return names


def _toolsets_known(names: list[str]) -> None:
    """``ValueError`` naming any toolset hermes-agent does not know (it would drop it silently)."""
    from toolsets import get_toolset_names, validate_toolset  # hermes-agent: imported after HERMES_HOME is set

    unknown = [name for name in names if not validate_toolset(name)]
    if unknown:
        raise ValueError(
            f"Unknown hermes toolset(s) {', '.join(map(repr, unknown))}: hermes-agent would leave them out without "
            f"a word. Known: {', '.join(sorted(get_toolset_names()))}."
        )


def ensure_hermes_home() -> str:
    """Point ``HERMES_HOME`` at a fresh temporary folder unless it is set; return it."""
    if not os.environ.get("HERMES_HOME"):
        os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="hermes-home-")
    return os.environ["HERMES_HOME"]


def agent_result_from(result: dict) -> dict:
    """Map ``AIAgent.run_conversation``'s dict to the recording API's
    ``agentResult`` ``{failed, failureReason, error, completed, turnExitReason}`` (SPEC §4.4)."""
    error = result.get("error")
    return {
        "failed": bool(result.get("failed")),
        "failureReason": result.get("failure_reason") or None,
        "error": str(error) if error else None,
        "completed": bool(result.get("completed", False)),
        "turnExitReason": result.get("turn_exit_reason") or None,
    }


@dataclasses.dataclass
class VisitAgentResult:
    """What one agent run produced: ``final_text`` (the reply, possibly hermes'
    own failure text), ``agent_result`` (for ``complete``), ``tool_calls``
    (names in call order) and ``logs_sent`` (how many logs reached the server)."""

    final_text: str
    agent_result: dict
    tool_calls: list[str]
    logs_sent: int
    api_calls: int


class VisitLogForwarder:
    """Turns hermes-agent callbacks into visit logs sent through the engine client.

    Each log is sent at once with its own ``seq`` (so a retried send adds
    nothing twice), which is also a sign of life for the visit's tokens. A
    failed send is logged and never breaks the agent. Without a client the
    logs are only kept in ``logs``.
    """

    def __init__(self, engine: EngineClient | None, run_id: str | None, visit_uuid: str | None, *, first_seq: int = 1):
        self.engine, self.run_id, self.visit_uuid = engine, run_id, visit_uuid
        self.logs: list[dict] = []
        self.sent = 0
        self.tool_calls: list[str] = []
        self._seq = first_seq
        self._lock = threading.Lock()
        self._last_thought = None

    def _emit(self, type_: str, message: str, detail=None):
        with self._lock:
            log = {
                "seq": self._seq,
                "type": type_,
                "timestamp": dt.datetime.now(dt.UTC).isoformat(),
                "message": message,
                "detail": detail,
            }
            self._seq += 1
            self.logs.append(log)
        if self.engine is None or not self.run_id or not self.visit_uuid:
            return
        try:
            self.engine.append_logs(self.run_id, self.visit_uuid, [log])
            self.sent += 1
        except EngineClientError as exc:
            logger.warning("could not record a %s log for visit %s: %s", type_, self.visit_uuid, exc)

    def on_reasoning(self, text: str):
        text = (text or "").strip()
        # hermes fires the same reasoning once while streaming and once more
        # when it assembles the message; one THINKING log is enough.
        if text and text != self._last_thought:
            self._last_thought = text
            self._emit("THINKING", text[:MAX_LOG_CHARS])

    def on_tool_start(self, call_id, name, args, *rest):
        with self._lock:
            self.tool_calls.append(name)
        self._emit("TOOL_CALL", str(name), args if isinstance(args, (dict, list)) else str(args))

    def on_tool_complete(self, call_id, name, args, result, *rest):
        text = result if isinstance(result, str) else str(result)
        self._emit("TOOL_RESULT", str(name), text[:MAX_LOG_CHARS])

    def callbacks(self) -> dict:
        """The ``AIAgent`` keyword arguments that route its events here."""
        return {
            "reasoning_callback": self.on_reasoning,
            "tool_start_callback": self.on_tool_start,
            "tool_complete_callback": self.on_tool_complete,
        }


def _config_from(context_query) -> context_tools.ContextQueryConfig | None:
    if context_query is None or isinstance(context_query, context_tools.ContextQueryConfig):
        return context_query
    return context_tools.ContextQueryConfig.from_context_query(context_query)


def visit_agent_run(
    *,
    user_message: str,
    context_query: dict | context_tools.ContextQueryConfig | None,
    base_url: str,
    api_key: str,
    model: str,
    toolsets: list[str] | tuple[str, ...] = (),
    system_prompt: str | None = None,
    language: str = "en",
    engine: EngineClient | None = None,
    heartbeat_interval: float = 30.0,
    max_iterations: int = 12,
    agent_kwargs: dict | None = None,
    mcp_server: str | None = None,
) -> VisitAgentResult:
    """Run one hermes-agent request for a visit and return its result (SPEC §5).

    ``context_query`` is the ``contextQuery`` object of the visit's
    registration (or a ``ContextQueryConfig``); when None the agent gets no
    workflow tools. ``base_url``/``api_key``/``model`` name the LLM endpoint
    (OpenAI-compatible). ``toolsets`` are the caller's own hermes toolsets
    by name (always passed explicitly, so hermes never falls back to
    "everything"). With ``mcp_server`` (a name, e.g. ``"hermes_ops"``) the
    visit's tools — the context tools and the business tools the engine gave
    the node — reach the agent over MCP instead: ``python -m
    contextquery.client.mcp_server`` over stdio for this run, toolset
    ``mcp-<name>``, tools ``mcp__<name>__<tool>``; hermes' MCP connections
    are closed when the run ends. With an ``engine`` client the visit's logs
    are recorded and a heartbeat runs every ``heartbeat_interval`` seconds;
    the caller still completes the visit with ``agent_result``.
    ``agent_kwargs`` go to ``AIAgent`` as they are. Raises ``ValueError`` for a
    malformed ``context_query``, a toolset that is not a name (a JSON
    manifest) or that hermes-agent does not know.
    """
    config = _config_from(context_query)
    enabled = toolsets_check(toolsets)
    if mcp_server is not None and not MCP_SERVER_NAME_RE.fullmatch(mcp_server):
        raise ValueError(f"mcp_server must be a name of letters, digits, '_' and '-', not {mcp_server!r}.")
    ensure_hermes_home()
    from run_agent import AIAgent  # imported late: HERMES_HOME must be set first

    prompt_parts = [system_prompt] if system_prompt else []
    served_over_mcp = config is not None and mcp_server is not None
    if served_over_mcp:
        from tools.mcp_tool import register_mcp_servers  # hermes-agent's MCP client

        register_mcp_servers({mcp_server: mcp_server_entry(config)})
        enabled.append(f"mcp-{mcp_server}")
        prompt_parts.append(context_tools.system_prompt_section(language, mcp_server=mcp_server))
    elif config is not None:
        context_tools.register_hermes_tools()
        if context_tools.TOOLSET not in enabled:
            enabled.append(context_tools.TOOLSET)
        prompt_parts.append(context_tools.system_prompt_section(language))
    try:
        _toolsets_known(enabled)
        return _run(
            agent_class=AIAgent,
            config=config,
            enabled=enabled,
            prompt_parts=prompt_parts,
            user_message=user_message,
            base_url=base_url,
            api_key=api_key,
            model=model,
            engine=engine,
            heartbeat_interval=heartbeat_interval,
            max_iterations=max_iterations,
            agent_kwargs=agent_kwargs,
        )
    finally:
        if served_over_mcp:
            from tools.mcp_tool import shutdown_mcp_servers

            # The stdio server holds this visit's token: it must not outlive the run.
            shutdown_mcp_servers()


def mcp_server_entry(config: context_tools.ContextQueryConfig) -> dict:
    """The hermes ``mcp_servers`` entry serving ``config``'s visit over stdio."""
    return hermes_mcp_config(config)


def _run(
    *,
    agent_class,
    config,
    enabled,
    prompt_parts,
    user_message,
    base_url,
    api_key,
    model,
    engine,
    heartbeat_interval,
    max_iterations,
    agent_kwargs,
) -> VisitAgentResult:
    """Build the ``AIAgent`` (``agent_class``) with ``enabled`` toolsets and run it for the visit."""
    run_id = config.run_id if config else None
    visit_uuid = config.visit_uuid if config else None
    forwarder = VisitLogForwarder(engine, run_id, visit_uuid)
    options = {
        "quiet_mode": True,
        "skip_context_files": True,
        "skip_memory": True,
        "tool_delay": 0.0,
        "max_iterations": max_iterations,
        **(agent_kwargs or {}),
    }
    agent = agent_class(
        base_url=base_url,
        api_key=api_key,
        model=model,
        enabled_toolsets=enabled,
        ephemeral_system_prompt="\n\n".join(prompt_parts) or None,
        **forwarder.callbacks(),
        **options,
    )
    heartbeat = None
    if engine is not None and run_id and visit_uuid:
        heartbeat = engine.heartbeat(run_id, visit_uuid, interval=heartbeat_interval).start()
    try:
        if config is not None:
            with context_tools.bind(config):
                result = agent.run_conversation(user_message)
        else:
            result = agent.run_conversation(user_message)
    finally:
        if heartbeat is not None:
            heartbeat.stop()
        try:
            agent.close()
        except Exception:  # cleanup must never hide the run's own outcome
            logger.debug("AIAgent.close() failed", exc_info=True)
    return VisitAgentResult(
        final_text=result.get("final_response") or "",
        agent_result=agent_result_from(result),
        tool_calls=list(forwarder.tool_calls),
        logs_sent=forwarder.sent,
        api_calls=int(result.get("api_calls") or 0),
    )
