"""``manage.py loaddemo``: record realistic demo runs through the recording rules (SPEC §6).

Everything goes through the rules the API applies (``contextquery.canvas``,
``contextquery.recording``, ``contextquery.judgement``), so the demo shows
what an engine would produce: the DAG with two branches into G, the AGENTIC
flight back from G to C, an agent reply that is a 429 error text (FAILED by pattern, then retried), a failed node under ``skip``
whose downstream node runs on, and one run left RUNNING with a visit whose
context token is printed for trying the context tools by hand. Running it
again records new runs.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand

from contextquery import judgement, recording, tokens
from contextquery.canvas import canvas_validate

DEMO_ENGINE = "demo-engine"


def _graph(nodes, edges, skip=()):
    return {
        "nodes": [
            {"id": node_id, "type": node_type, "name": name, "failStrategy": "skip" if node_id in skip else "abort"}
            for node_id, node_type, name in nodes
        ],
        "edges": [{"source": s, "target": t} for s, t in edges],
    }


RESEARCH_GRAPH = _graph(
    [
        ("A", "agent", "Collect sources"),
        ("B", "agent", "Summarise sources"),
        ("C", "agent", "Draft findings"),
        ("D", "http", "Fetch sales figures"),
        ("E", "code", "Clean figures"),
        ("F", "agent", "Chart commentary"),
        ("G", "agent", "Write the report"),
    ],
    [("A", "B"), ("B", "C"), ("C", "G"), ("D", "E"), ("E", "F"), ("F", "G")],
)

PLANNER_GRAPH = _graph(
    [
        ("A", "agent", "Understand the ticket"),
        ("B", "agent", "Reproduce the bug"),
        ("C", "agent", "Write the fix"),
        ("G", "agent", "Review the fix"),
    ],
    [("A", "B"), ("B", "C"), ("C", "G")],
)

TRANSLATE_GRAPH = _graph(
    [("A", "llm", "Extract terms"), ("B", "agent", "Translate"), ("C", "code", "Publish")],
    [("A", "B"), ("B", "C")],
)

ENRICH_GRAPH = _graph(
    [
        ("A", "http", "Load customer list"),
        ("B", "http", "Enrich from CRM"),
        ("C", "agent", "Segment customers"),
    ],
    [("A", "B"), ("B", "C"), ("A", "C")],
    skip=("B",),
)


def _ok(message="调用成功", **data):
    return {"status": 200, "message": message, "data": data}


def _thinking(text):
    return {"type": "THINKING", "message": text}


def _tool(name, args, result):
    return [
        {"type": "TOOL_CALL", "message": name, "detail": args},
        {"type": "TOOL_RESULT", "message": name, "detail": result},
    ]


def _todo(*items):
    return {"type": "TODO_UPDATE", "detail": [{"text": text, "status": status} for text, status in items]}


class Demo:
    """Records the demo runs for one engine user; ``lines`` collects what to print."""

    def __init__(self, user, base_url: str | None = None):
        self.user = user
        self.base_url = base_url
        self.lines: list[str] = []

    def visit(
        self,
        run,
        node_id,
        *,
        parents=None,
        logs=(),
        output=None,
        final_text=None,
        status="SUCCESS",
        error=None,
        agent_result=None,
        complete=True,
        input=None,
    ):
        kwargs = {} if parents is None else {"from_visit_uuids": [str(p.visit_uuid) for p in parents]}
        reg = recording.visit_register(run=run, node_id=node_id, input=input, base_url=self.base_url, **kwargs)
        if logs:
            recording.logs_append(visit=reg.visit, logs=list(logs))
        if complete:
            verdict = judgement.visit_complete(
                visit=reg.visit,
                status=status,
                output=output,
                final_text=final_text,
                error=error,
                agent_result=agent_result,
            )
            reg.visit.refresh_from_db()
            reg.visit.verdict = verdict
        return reg

    def run(self, graph, mode, name, workflow_id):
        run, _ = recording.run_create(
            user=self.user, graph=canvas_validate(graph), mode=mode, workflow_name=name, workflow_id=workflow_id
        )
        return run

    # ------------------------------------------------------------------ the runs

    def research_dag(self):
        """DAG A→B→C→G and D→E→F→G: G has two paths."""
        run = self.run(RESEARCH_GRAPH, "DAG", "Quarterly research report", "research-report")
        a = self.visit(
            run,
            "A",
            parents=[],
            input={"prompt": "Find three recent sources on EU battery demand."},
            logs=[
                _thinking("Start with industry reports, then news from the last quarter."),
                _todo(("Search reports", "in_progress"), ("Search news", "pending")),
                *_tool(
                    "web_search",
                    {"q": "EU battery demand 2026 report"},
                    "3 results: IEA outlook, BNEF note, Eurostat table",
                ),
                _todo(("Search reports", "completed"), ("Search news", "completed")),
            ],
            output=_ok(sources=["IEA Global EV Outlook", "BNEF battery note", "Eurostat table"]),
            final_text="Found three sources: IEA Global EV Outlook, a BNEF battery note and Eurostat.",
        )
        d = self.visit(run, "D", parents=[], output=_ok(rows=1284, quarter="Q3"))
        b = self.visit(
            run,
            "B",
            logs=[_thinking("Summarise each source in two sentences.")],
            output=_ok(summary="Demand grows ~25% a year; supply lags in cathodes."),
            final_text="Demand grows about 25% a year, while cathode supply lags behind.",
        )
        e = self.visit(run, "E", output=_ok(rows=1270, dropped=14))
        c = self.visit(
            run,
            "C",
            logs=[_thinking("Combine the summary with the caveats.")],
            output=_ok(findings=["Demand +25%/yr", "Cathode bottleneck"]),
            final_text="Findings: demand grows 25% a year; cathodes are the bottleneck.",
        )
        f = self.visit(
            run,
            "F",
            logs=[*_tool("make_chart", {"series": "sales", "kind": "bar"}, "chart.png")],
            output=_ok(chart="chart.png", comment="Sales peak in September."),
            final_text="Sales peak in September; the chart shows the monthly totals.",
        )
        g = self.visit(
            run,
            "G",
            logs=[
                _thinking("Merge the findings and the chart commentary into one report."),
                _todo(("Outline", "completed"), ("Write", "completed")),
            ],
            output=_ok(report="# Q3 report\nDemand grows 25% a year …"),
            final_text="# Q3 report\nDemand grows 25% a year; sales peak in September.",
        )
        recording.run_finish(run=run, status="SUCCESS")
        self.lines.append(f"DAG with two branches into G: run {run.run_id} (G has 2 paths)")
        return run, {"A": a, "B": b, "C": c, "D": d, "E": e, "F": f, "G": g}

    def planner_flyback(self):
        """AGENTIC A→B→C→G, then the planner flies back to C."""
        run = self.run(PLANNER_GRAPH, "AGENTIC", "Bug-fix planner", "bugfix-planner")
        a = self.visit(
            run,
            "A",
            parents=[],
            output=_ok(ticket="Login fails for emails with '+'"),
            final_text="The ticket: login fails for e-mail addresses containing '+'.",
        )
        b = self.visit(
            run,
            "B",
            logs=[*_tool("run_tests", {"k": "login"}, "1 failed: test_plus_address")],
            output=_ok(reproduced=True),
            final_text="Reproduced: test_plus_address fails.",
        )
        c1 = self.visit(
            run,
            "C",
            logs=[_thinking("URL-encode the address before the lookup.")],
            output=_ok(patch="quote(email)"),
            final_text="Patched: the address is URL-encoded.",
        )
        g = self.visit(
            run,
            "G",
            logs=[_thinking("Encoding hides the bug; the lookup should not take URL text.")],
            output=_ok(approved=False, comment="Fix the parser instead of encoding."),
            final_text="Not approved: fix the parser instead of encoding the address.",
        )
        c2 = self.visit(
            run,
            "C",
            logs=[_thinking("Fix the parser as the review asks.")],
            output=_ok(patch="parse_email() keeps '+'"),
            final_text="Patched the parser; '+' is kept.",
        )
        recording.run_finish(run=run, status="SUCCESS")
        self.lines.append(f"AGENTIC flight back from G to C: run {run.run_id} (C#2 path A,B,C,G,C)")
        return run, {"A": a, "B": b, "C1": c1, "G": g, "C2": c2}

    def rate_limited(self):
        """B's agent reply is a 429 error text: FAILED by pattern, retryable; the engine retries B."""
        run = self.run(TRANSLATE_GRAPH, "DAG", "Translate release notes", "translate-notes")
        a = self.visit(
            run,
            "A",
            parents=[],
            output=_ok(terms=["workflow", "visit", "token"]),
            final_text="Terms: workflow, visit, token.",
        )
        reply = "API call failed after 3 retries: HTTP 429: Rate limit reached for requests. Please try again in 20s."
        b1 = self.visit(
            run,
            "B",
            output=_ok(text=reply),
            final_text=reply,
            logs=[{"type": "ERROR", "message": "provider answered 429 three times"}],
        )
        b2 = self.visit(
            run,
            "B",
            parents=[a.visit],
            output=_ok(text="工作流、访问、令牌"),
            final_text="Translated: 工作流、访问、令牌.",
        )
        c = self.visit(run, "C", output=_ok(published=True))
        recording.run_finish(run=run, status="SUCCESS")
        verdict = b1.visit.verdict
        self.lines.append(
            f"429 reply judged {verdict['effectiveStatus']} ({verdict['category']}, retryable={verdict['retryable']}) "
            f"then retried: run {run.run_id}"
        )
        return run, {"A": a, "B1": b1, "B2": b2, "C": c}

    def skipped_failure(self):
        """B fails under ``skip``; C runs on and sees B's failure envelope."""
        run = self.run(ENRICH_GRAPH, "DAG", "Customer enrichment", "customer-enrichment")
        a = self.visit(run, "A", parents=[], output=_ok(customers=412))
        b = self.visit(run, "B", status="FAILED", error="CRM answered 503 Service Unavailable")
        c = self.visit(
            run,
            "C",
            logs=[_thinking("The CRM data is missing; segment on the base list only.")],
            output=_ok(segments={"small": 301, "large": 111}),
            final_text="Segmented 412 customers without CRM data: 301 small, 111 large.",
        )
        recording.run_finish(run=run, status="SUCCESS")
        self.lines.append(f"Failed node under skip, downstream ran on: run {run.run_id}")
        return run, {"A": a, "B": b, "C": c}

    def still_running(self):
        """A run left RUNNING: A done, B's visit RUNNING (its context token is printed)."""
        run = self.run(PLANNER_GRAPH, "AGENTIC", "Bug-fix planner (live)", "bugfix-planner")
        a = self.visit(
            run,
            "A",
            parents=[],
            output=_ok(ticket="Export to CSV drops the last row"),
            final_text="The ticket: CSV export drops the last row.",
            logs=[_thinking("Read the ticket and the export code path.")],
        )
        b = self.visit(run, "B", complete=False, logs=[_thinking("Write a failing test first.")])
        self.lines.append(f"Run {run.run_id} is still RUNNING; visit {b.visit.visit_uuid} (B) is RUNNING")
        self.lines.extend(running_visit_hint(b))
        return run, {"A": a, "B": b}

    def all(self) -> dict:
        return {
            "research": self.research_dag(),
            "flyback": self.planner_flyback(),
            "rate_limited": self.rate_limited(),
            "skipped": self.skipped_failure(),
            "running": self.still_running(),
        }


def running_visit_hint(registration) -> list[str]:
    """Lines telling how to query the context of the demo's RUNNING visit.

    The token is shown here once, the way the engine hands it to the bridge.
    """
    cq = registration.context_query
    if cq is None:
        return ["Context query is disabled (HERMES_CONTEXT_QUERY_ENABLED=false): no token issued."]
    ttl = tokens.config()["TOKEN_TTL_SECONDS"]
    tokens_url = f"{cq['base_url']}/api/runs/{cq['run_id']}/visits/{cq['visit_uuid']}/tokens"
    return [
        f"Its context token: {cq['token']}",
        f"It expires {ttl} s after the visit's last sign of life (a query, a log, a heartbeat), "
        f"so at {cq['expires_at']} if nothing happens before. For a fresh token, POST {tokens_url} "
        f"with the {DEMO_ENGINE} client's API token (manage.py create_api_token {DEMO_ENGINE}), "
        "or run loaddemo again.",
        "Try the three context endpoints (B may read its predecessor A):",
        *tokens.context_query_curl_lines(context_query=cq, node_id="A"),
    ]


def demo_engine():
    """The demo engine-client user, created on first use with the recording permissions."""
    user, _ = get_user_model().objects.get_or_create(username=DEMO_ENGINE)
    if not user.has_usable_password() and user.password == "":
        user.set_unusable_password()
        user.save(update_fields=["password"])
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="contextquery", codename__in=("record_run",))
    )
    return get_user_model().objects.get(pk=user.pk)  # fresh permission cache


def demo_load(*, base_url: str | None = None) -> Demo:
    """Record every demo run; returns the Demo with its ``lines`` and the runs.
    ``base_url`` is the server the printed hints name (default: where it serves,
    :func:`project.serving.base_url`)."""
    demo = Demo(demo_engine(), base_url=base_url)
    demo.runs = demo.all()
    return demo


class Command(BaseCommand):
    help = "Record demo runs (DAG, AGENTIC flight back, a 429 reply, a skipped failure, one run still running)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url",
            help="The server the printed hints and the context token name (default: HERMES_CONTEXT_QUERY_BASE_URL, "
            "else the address make run serves on).",
        )

    def handle(self, *args, base_url=None, **options):
        demo = demo_load(base_url=base_url.rstrip("/") if base_url else None)
        for line in demo.lines:
            self.stdout.write(line)
        self.stdout.write(self.style.SUCCESS(f"Recorded {len(demo.runs)} demo runs as {DEMO_ENGINE}."))
