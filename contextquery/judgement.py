"""The failure upgrade on completion (SPEC §4.4): what a visit's completion really was.

The engine reports what it saw; :func:`visit_complete` decides the effective
status, structured signals first and patterns as the fallback:

1. the agent says it failed → FAILED with its reason;
2. the agent stopped without finishing → FAILED, ``incomplete``;
3. the engine reports FAILED (or SKIPPED) → so it is;
4. SUCCESS whose output envelope says 400 → FAILED;
5. SUCCESS whose reply matches an enabled error pattern → FAILED;
5a. SUCCESS whose reply the detection model calls a failed LLM call
    (SPEC §3.3a) → FAILED with the model's category;
6. SUCCESS with a blank reply → FAILED, ``incomplete``.

Every judged reply is handed to :func:`patterns.marks.reply_judged`, so the
patterns app keeps the sample draft trials run on without reading run tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from contextquery import tokens
from contextquery.canvas import canvas_node
from contextquery.models import Visit, VisitStatus
from patterns import marks
from patterns.detection import count_hit, detect, model_decision
from patterns.detector import model_score
from patterns.matching import Detection, is_blank
from patterns.models import RETRYABLE_CATEGORIES, Category, JudgedReply
from project.errors import Conflict, Invalid

COMPLETION_STATUSES = (VisitStatus.SUCCESS, VisitStatus.FAILED, VisitStatus.SKIPPED)
#: How much of a reply a failure reason quotes (characters).
REASON_QUOTE_CHARS = 200

DecidedBy = JudgedReply.DecidedBy


def _one_of(allowed, value) -> str:
    return _("must be one of %(allowed)s, not %(value)r.") % {"allowed": ", ".join(allowed), "value": value}


@dataclass(frozen=True)
class AgentResult:
    """The agent's own structured signals (SPEC §4.4)."""

    failed: bool | None = None
    failure_reason: str | None = None
    error: str | None = None
    completed: bool | None = None
    turn_exit_reason: str | None = None

    @classmethod
    def from_wire(cls, data: dict | None) -> AgentResult | None:
        if data is None:
            return None
        return cls(
            failed=data.get("failed"),
            failure_reason=data.get("failureReason"),
            error=data.get("error"),
            completed=data.get("completed"),
            turn_exit_reason=data.get("turnExitReason"),
        )


@dataclass
class _Judgement:
    """What the steps of §4.4 decided: the effective status and output, the
    reason, category and retryable flag, the pattern that matched the reply
    (it failed the visit, or agrees with the agent), and which step decided."""

    status: str
    output: dict | None
    reason: str = ""
    category: str = ""
    retryable: bool | None = None
    detection: Detection | None = None
    decided_by: str = DecidedBy.PASSED
    model_score: float | None = None


def visit_complete(
    *,
    visit: Visit,
    status: str,
    output=None,
    final_text: str | None = None,
    error: str | None = None,
    agent_result: dict | None = None,
) -> dict:
    """Record a visit's completion and decide its effective status (SPEC §4.4).

    Structured agent signals first, error patterns last (the steps of §4.4 in
    order). ``output`` is the envelope ``{status, message, data}`` or None;
    ``final_text`` None means "not sent" (only a sent finalText is judged);
    ``agent_result`` the wire ``{failed, failureReason, error, completed,
    turnExitReason}``. Returns the verdict (see :func:`visit_verdict`).

    An identical repeat returns the stored verdict without judging again; a
    different one raises Conflict. Accepted after the run finished (a visit
    cancelled by the finish takes its late completion). Raises Invalid for a
    bad status or a non-object output. Revokes the visit's tokens.
    """
    if status not in COMPLETION_STATUSES:
        raise Invalid.field("status", _one_of(COMPLETION_STATUSES, status))
    if output is not None and not isinstance(output, dict):
        raise Invalid.field("output", _("must be an object, the envelope {status, message, data}."))
    if (
        output is not None
        and "status" in output
        and (isinstance(output["status"], bool) or not isinstance(output["status"], int))
    ):
        raise Invalid.field("output.status", _("must be an integer (200 success, 400 failure)."))
    if agent_result is not None and not isinstance(agent_result, dict):
        raise Invalid.field(
            "agentResult", _("must be an object {failed, failureReason, error, completed, turnExitReason}.")
        )
    completion = {
        "status": status,
        "output": output,
        "finalText": final_text,
        "error": error,
        "agentResult": agent_result,
    }
    with transaction.atomic():
        locked = Visit.objects.select_for_update(of=("self",)).select_related("run").get(pk=visit.pk)
        if locked.completion is not None:
            if locked.completion == completion:
                return visit_verdict(visit=locked)
            raise Conflict(
                _("Visit '%(visit)s' was already completed (%(status)s) with a different body.")
                % {"visit": locked.visit_uuid, "status": locked.status}
            )
        judged = _judge(locked, status, output, final_text, error, AgentResult.from_wire(agent_result))
        strategy = (canvas_node(locked.run.graph, locked.node_id) or {}).get("failStrategy") or "abort"
        locked.status = judged.status
        locked.output = judged.output
        locked.final_text = final_text
        locked.failure_reason = judged.reason
        locked.failure_category = judged.category
        locked.retryable = judged.retryable
        locked.run_action = "abort" if judged.status == VisitStatus.FAILED and strategy == "abort" else "continue"
        det = judged.detection
        if det is not None:
            locked.matched_pattern_id = det.pattern_id
            locked.matched_pattern_key = det.key or ""
            locked.matched_pattern_name = det.name or ""
            locked.matched_pattern_text = det.pattern or ""
        locked.completion = completion
        locked.ended_at = timezone.now()
        locked.last_seen_at = locked.ended_at  # completion is a sign of life (SPEC §8)
        locked.save()
        if det is not None:
            count_hit(pattern_id=det.pattern_id)
        if final_text is not None:
            marks.reply_judged(
                subject=locked.visit_uuid,
                text=final_text,
                failed=judged.status == VisitStatus.FAILED,
                decided_by=judged.decided_by,
                detection=det,
                category=judged.category,
                subject_url=locked.get_absolute_url(),
                label=visit_label(locked),
                model_score=_model_score(judged, final_text),
            )
    tokens.tokens_revoke_for_visit(visit=locked)
    return visit_verdict(visit=locked)


def visit_label(visit: Visit) -> str:
    """How a visit is named outside its run's pages: ``run 8c1f2a9e · node B #2``."""
    return _("run %(run)s · node %(node)s #%(iter)d") % {
        "run": visit.run.run_id,
        "node": visit.node_id,
        "iter": visit.iter_seq,
    }


def visit_verdict(*, visit: Visit) -> dict:
    """The stored verdict of a completed visit (SPEC §4.4):
    ``{visitUuid, effectiveStatus, failureReason, matchedPattern, category,
    retryable, runAction}``; ``matchedPattern`` is ``{id, key, name}`` or None."""
    matched = None
    if visit.matched_pattern_id or visit.matched_pattern_name:
        matched = {
            "id": visit.matched_pattern_id,
            "key": visit.matched_pattern_key or None,
            "name": visit.matched_pattern_name,
        }
    return {
        "visitUuid": str(visit.visit_uuid),
        "effectiveStatus": visit.status,
        "failureReason": visit.failure_reason or None,
        "matchedPattern": matched,
        "category": visit.failure_category or None,
        "retryable": visit.retryable,
        "runAction": visit.run_action or None,
    }


def _model_score(judged: _Judgement, final_text: str) -> float | None:
    """The model's probability for the reply (kept with the judged reply for ops to see)."""
    if judged.model_score is not None:
        return judged.model_score
    verdict = model_score(final_text)
    return None if verdict is None else verdict.probability


def _detect(text: str | None) -> Detection | None:
    return None if is_blank(text) else detect(text)


def _failure_envelope(reason: str, output: dict | None, final_text: str | None) -> dict:
    original_data = output.get("data") if isinstance(output, dict) else None
    return {"status": 400, "message": reason, "data": {"originalText": final_text, "originalData": original_data}}


def _categorised(judgement: _Judgement, *texts: str | None) -> _Judgement:
    """Fill category and retryable from the first text a pattern matches (no hit counted)."""
    for text in texts:
        det = _detect(text)
        if det is not None:
            judgement.category = det.category
            judgement.retryable = bool(det.retryable)
            return judgement
    return judgement


def _judge(visit, status, output, final_text, error, agent: AgentResult | None) -> _Judgement:
    node_id = visit.node_id
    # 1. The agent says it failed.
    if agent is not None and agent.failed:
        parts = [p for p in (agent.failure_reason, agent.error or error) if p]
        reason = ": ".join(parts) if parts else f"Agent of node {node_id} reported a failure."
        judged = _Judgement(
            VisitStatus.FAILED, _failure_envelope(reason, output, final_text), reason, decided_by=DecidedBy.AGENT
        )
        # The agent's own category wins; a pattern matching the reply is kept
        # on the visit (ops see which rule agrees) and gives retryable (§4.4.1).
        det = _detect(final_text)
        judged.detection = det
        if agent.failure_reason in Category.values:
            judged.category = agent.failure_reason
        elif det is not None:
            judged.category = det.category
        else:
            _categorised(judged, agent.error or error)
            judged.category = judged.category or Category.OTHER
        if det is not None:
            judged.retryable = bool(det.retryable)
        elif judged.retryable is None:
            judged.retryable = judged.category in RETRYABLE_CATEGORIES
        return judged
    # 2. The agent stopped without finishing.
    if agent is not None and agent.completed is False:
        why = agent.turn_exit_reason or agent.failure_reason or "no reason given"
        reason = f"Agent of node {node_id} stopped without finishing ({why})."
        return _Judgement(
            VisitStatus.FAILED,
            _failure_envelope(reason, output, final_text),
            reason,
            Category.INCOMPLETE,
            False,
            decided_by=DecidedBy.AGENT,
        )
    # 3. The engine reports FAILED or SKIPPED.
    if status == VisitStatus.FAILED:
        message = error or (output or {}).get("message") or f"Node {node_id} reported a failure."
        envelope = (
            {**output, "status": 400} if output is not None else {"status": 400, "message": message, "data": None}
        )
        judged = _Judgement(VisitStatus.FAILED, envelope, message, decided_by=DecidedBy.ENGINE)
        return _categorised(judged, error, final_text)
    if status == VisitStatus.SKIPPED:
        return _Judgement(VisitStatus.SKIPPED, output)
    # 4. SUCCESS whose envelope says 400.
    if output is not None and output.get("status") == 400:
        message = output.get("message") or "no reason given"
        reason = f"Node {node_id} failed (envelope.status=400): {message}"
        return _categorised(
            _Judgement(VisitStatus.FAILED, output, reason, decided_by=DecidedBy.ENGINE), output.get("message")
        )
    # 5. SUCCESS whose agent reply is really an error (only a sent finalText is judged).
    blank = is_blank(final_text)
    det = None if blank else detect(final_text)
    if det is not None:
        quote = final_text[:REASON_QUOTE_CHARS]
        reason = f'The agent reply matched error pattern "{det.name}": "{quote}"'
        return _Judgement(
            VisitStatus.FAILED,
            _failure_envelope(reason, output, final_text),
            reason,
            det.category,
            bool(det.retryable),
            det,
            DecidedBy.PATTERN,
        )
    # 5a. SUCCESS whose reply the detection model calls a failed LLM call (SPEC §3.3a).
    verdict = None if blank else model_decision(final_text)
    if verdict is not None:
        quote = final_text[:REASON_QUOTE_CHARS]
        reason = f'The agent reply looks like a failed LLM call (model score {verdict.probability:.2f}): "{quote}"'
        judged = _Judgement(
            VisitStatus.FAILED,
            _failure_envelope(reason, output, final_text),
            reason,
            verdict.category,
            verdict.retryable,
            decided_by=DecidedBy.MODEL,
        )
        judged.model_score = verdict.probability
        return judged
    # 6. SUCCESS with a blank reply, or an answer envelope with nothing in it ({"text": ""}).
    if final_text is not None and blank:
        reason = (
            "empty agent reply" if not final_text.strip() else "empty agent reply (an answer envelope with no text)"
        )
        return _Judgement(
            VisitStatus.FAILED,
            _failure_envelope(reason, output, final_text),
            reason,
            Category.INCOMPLETE,
            False,
            decided_by=DecidedBy.BLANK,
        )
    return _Judgement(VisitStatus.SUCCESS, output)


__all__ = ["COMPLETION_STATUSES", "AgentResult", "visit_complete", "visit_label", "visit_verdict"]
