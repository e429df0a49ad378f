"""Run one hermes-agent request for a workflow visit (SPEC §5, issue 5). No Django import.

:func:`visit_agent_run` builds a fresh ``AIAgent`` whose toolsets are the
caller's plus ``workflow_context`` (only when the request carries a
``context_query``), runs it inside :func:`contextquery.context_tools.bind`
while a heartbeat keeps the visit alive, forwards hermes-agent's callbacks to
the recording API as visit logs (THINKING, TOOL_CALL, TOOL_RESULT), and
returns the final text with ``agentResult`` mapped from ``run_conversation``'s
result (SPEC §4.4).

hermes-agent reads ``HERMES_HOME`` when it is imported; when it is not set,
this module points it at a throw-away folder first, so a run never touches a
real ``~/.hermes``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
import tempfile
import threading

from contextquery.client import context_tools
from contextquery.client.engine import EngineClient, EngineClientError

logger = logging.getLogger("hermes_ops.hermes_runner")

#: Longest tool result or thought forwarded as a log, in characters.
MAX_LOG_CHARS = 20000


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
) -> VisitAgentResult:
    """Run one hermes-agent request for a visit and return its result (SPEC §5).

    ``context_query`` is the ``contextQuery`` object of the visit's
    registration (or a ``ContextQueryConfig``); when None the agent gets no
    workflow tools. ``base_url``/``api_key``/``model`` name the LLM endpoint
    (OpenAI-compatible). ``toolsets`` are the caller's own hermes toolsets
    (always passed explicitly, so hermes never falls back to "everything").
    With an ``engine`` client the visit's logs are recorded and a heartbeat
    runs every ``heartbeat_interval`` seconds; the caller still completes the
    visit with ``agent_result``. ``agent_kwargs`` go to ``AIAgent`` as they are.
    Raises ``ValueError`` for a malformed ``context_query``.
    """
    config = _config_from(context_query)
    ensure_hermes_home()
    from run_agent import AIAgent  # imported late: HERMES_HOME must be set first

    enabled = list(toolsets)
    prompt_parts = [system_prompt] if system_prompt else []
    if config is not None:
        context_tools.register_hermes_tools()
        if context_tools.TOOLSET not in enabled:
            enabled.append(context_tools.TOOLSET)
        prompt_parts.append(context_tools.system_prompt_section(language))

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
    agent = AIAgent(
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
