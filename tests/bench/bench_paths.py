"""Path resolver speed (SPEC §4.2): ``path_graph`` over 1,000 visits, target ≤ 5 ms.

Pure (no database). Three shapes: a diamond chain (2**333 chains, capped at
MAX_PATHS), an AGENTIC chain with random flights back (one long path, cut at
MAX_PATH_DEPTH), and a DAG of parallel branches joined at the end.
"""

import random
import statistics
import time

from contextquery.paths import Canvas, VisitNode, path_graph

TARGET_MS = 5.0


def _diamonds(count):
    visits, join, order = [VisitNode("j0", "J", 1)], "j0", 1
    for i in range(1, count):
        x, y, j = f"x{i}", f"y{i}", f"j{i}"
        visits += [
            VisitNode(x, "X", order + 1, (join,)),
            VisitNode(y, "Y", order + 2, (join,)),
            VisitNode(j, "J", order + 3, (x, y)),
        ]
        order, join = order + 3, j
    canvas = Canvas(
        {
            "nodes": [{"id": n} for n in "JXY"],
            "edges": [{"source": s, "target": t} for s, t in ("JX", "JY", "XJ", "YJ")],
        }
    )
    return visits, join, canvas


def _agentic(count, seed=7):
    rng = random.Random(seed)
    nodes = [f"N{i}" for i in range(20)]
    canvas = Canvas(
        {
            "nodes": [{"id": n} for n in nodes],
            "edges": [{"source": a, "target": b} for a, b in zip(nodes, nodes[1:], strict=False)],
        }
    )
    visits = [VisitNode("v0", "N0", 1)]
    for i in range(1, count):
        visits.append(VisitNode(f"v{i}", rng.choice(nodes), i + 1, (f"v{i - 1}",)))
    return visits, visits[-1].visit_uuid, canvas


def _branches(count, width=10):
    depth = (count - 1) // width
    canvas = Canvas(
        {"nodes": [{"id": f"B{b}S{s}"} for b in range(width) for s in range(depth)] + [{"id": "END"}], "edges": []}
    )
    visits, order, tails = [], 0, []
    for b in range(width):
        parent = ()
        for s in range(depth):
            order += 1
            uuid = f"b{b}s{s}"
            visits.append(VisitNode(uuid, f"B{b}S{s}", order, parent))
            parent = (uuid,)
        tails.append(parent[0])
    visits.append(VisitNode("end", "END", order + 1, tuple(tails)))
    return visits, "end", canvas


def _time(visits, target, canvas, repeat):
    by_uuid = {v.visit_uuid: v for v in visits}
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        graph = path_graph(visit_uuid=target, visits=by_uuid, canvas=canvas)
        samples.append((time.perf_counter() - started) * 1000)
    return graph, samples


def run(*, scale: bool = False) -> str:
    count = 5000 if scale else 1000
    repeat = 50
    rows = [f"{'shape':<22}{'visits':>8}{'paths':>7}{'median ms':>11}{'p95 ms':>9}  target ≤ {TARGET_MS} ms"]
    for name, build in (
        ("diamond chain", _diamonds),
        ("agentic flights back", _agentic),
        ("parallel branches", _branches),
    ):
        visits, target, canvas = build(count // 3 if name == "diamond chain" else count)
        graph, samples = _time(visits, target, canvas, repeat)
        p95 = sorted(samples)[int(0.95 * len(samples)) - 1]
        verdict = "ok" if statistics.median(samples) <= TARGET_MS else "SLOW"
        rows.append(
            f"{name:<22}{len(visits):>8}{len(graph.paths):>7}{statistics.median(samples):>11.2f}{p95:>9.2f}  {verdict}"
        )
    return "\n".join(rows)
