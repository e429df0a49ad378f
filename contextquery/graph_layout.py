"""The run page's picture of the workflow graph (SPEC §4.6).

Pure: plain data in, plain data out, no Django import. :func:`graph_picture`
lays the canvas out left to right in layers and turns the run's executed hops
into SVG path geometry; the template ``contextquery/_graph.svg`` draws it
(so every text is escaped by the template engine, never here).

Layering comes from networkx: the canvas minus its back edges (a canvas may
have cycles) is split with ``topological_generations``; each generation is a
column. Within a column, nodes keep their canvas order, then move towards the
mean row of their predecessors, which removes most crossings in workflow
graphs.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from contextquery.paths import BACKTRACK, EDGE, JUMP, Canvas, VisitNode, hop_kind

NODE_W = 150
NODE_H = 56
COL_GAP = 80
ROW_GAP = 36
#: Room above the boxes for backtrack arcs, self-loops and forward hops that skip a column.
MARGIN_TOP = 70
#: How far above the boxes it passes a forward hop that skips columns runs (pixels).
SKIP_LIFT = 26
#: A curve closer than this to a box counts as running through it (pixels).
BOX_PAD = 4
#: A forward hop that skips more columns than this is drawn over the boxes
#: without testing each one for a crossing (keeps layout linear on big canvases).
MAX_CHECKED_COLUMNS = 8
MARGIN = 20
#: Room for text in a box (pixels): the box less its padding, and less the
#: visit count on the second line.
NAME_ROOM = NODE_W - 20
META_ROOM = NODE_W - 20 - 34


@dataclass(frozen=True)
class NodeBox:
    """One canvas node placed on the picture (pixels, top-left corner).

    ``label`` is the name (or id) and ``meta`` the id as they fit the box;
    ``status`` is the status of the node's latest visit ("" when never
    visited); ``failed`` counts its FAILED visits; ``href`` is where the box
    links to (None when never visited).
    """

    node_id: str
    name: str
    label: str
    meta: str
    node_type: str
    x: int
    y: int
    status: str
    visit_count: int
    failed: int
    skip: bool
    href: str | None

    @property
    def cx(self) -> float:
        return self.x + NODE_W / 2

    @property
    def cy(self) -> float:
        return self.y + NODE_H / 2


@dataclass(frozen=True)
class Hop:
    """A line on the picture: an executed hop (``kind`` edge | backtrack | jump,
    ``count`` times) or, with ``count`` 0, a canvas edge that never fired.
    ``d`` is the SVG path; ``label_x``/``label_y`` where the count goes."""

    source: str
    target: str
    kind: str
    count: int
    d: str
    label_x: float
    label_y: float

    @property
    def key(self) -> str:
        return f"{self.source}->{self.target}"


@dataclass(frozen=True)
class Picture:
    """Everything the SVG template needs: its size, boxes and lines."""

    width: float
    height: float
    nodes: list[NodeBox]
    hops: list[Hop] = field(default_factory=list)
    node_w: int = NODE_W
    node_h: int = NODE_H

    @property
    def backtrack_keys(self) -> list[str]:
        return [h.key for h in self.hops if h.kind == BACKTRACK and h.count]


def canvas_layers(graph: Mapping | None) -> list[list[str]]:
    """The canvas's node ids in columns, left to right (SPEC §4.6).

    The back edges of one depth-first pass (edges into a node still on the
    stack) are dropped, so a cyclic canvas still layers in time linear in its
    size; self-loops never count. Lone nodes go in column 0.
    """
    canvas = Canvas(graph)
    edges = [(s, t) for s, t in _edge_order(graph, canvas) if s != t]
    dag = nx.DiGraph()
    dag.add_nodes_from(canvas.node_ids)
    dag.add_edges_from(edges)
    dag.remove_edges_from(back_edges(canvas.node_ids, edges))
    order = {node: i for i, node in enumerate(canvas.node_ids)}
    layers: list[list[str]] = []
    row_of: dict[str, float] = {}
    for generation in nx.topological_generations(dag):
        column = sorted(generation, key=order.__getitem__)
        pull = {}
        for i, node in enumerate(column):
            preds = [row_of[p] for p in dag.predecessors(node)]
            pull[node] = sum(preds) / len(preds) if preds else float(i)
        column.sort(key=pull.__getitem__)
        row_of.update((node, float(i)) for i, node in enumerate(column))
        layers.append(column)
    return layers


def back_edges(nodes: list[str], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The edges that close a cycle in one iterative depth-first pass over ``nodes``
    (in their order) — removing them leaves the graph acyclic. O(nodes + edges)."""
    successors: dict[str, list[str]] = defaultdict(list)
    for s, t in edges:
        successors[s].append(t)
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    found = []
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(successors[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                found.append((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(successors[child])))
    return found


def _edge_order(graph: Mapping | None, canvas: Canvas) -> list[tuple[str, str]]:
    # Canvas.edges is a set; the graph's own list keeps the picture stable.
    seen: dict[tuple[str, str], None] = {}
    for edge in (graph or {}).get("edges") or []:
        if isinstance(edge, Mapping):
            pair = (edge.get("source"), edge.get("target"))
            if pair in canvas.edges:
                seen.setdefault(pair, None)
    return list(seen)


def graph_picture(
    *,
    graph: Mapping | None,
    visits: Iterable[VisitNode],
    node_href: Callable[[str, list[VisitNode]], str | None] = lambda node_id, visits: None,
) -> Picture:
    """Lay out ``graph`` and draw the hops of ``visits`` over it (SPEC §4.6).

    ``visits``: the run's visits (with status and parents); ``node_href(node_id,
    its visits by sortOrder)`` gives each visited box its link. Every parent
    link between two visits is a hop, classified by :func:`paths.hop_kind`;
    hops between the same two nodes are drawn once with their count. Canvas
    edges that never fired are drawn with ``count`` 0.
    """
    canvas = Canvas(graph)
    visits = sorted(visits, key=lambda v: v.sort_order)
    by_uuid = {v.visit_uuid: v for v in visits}
    by_node: dict[str, list[VisitNode]] = defaultdict(list)
    for v in visits:
        by_node[v.node_id].append(v)

    layers = canvas_layers(graph)
    stray = [n for n in by_node if n not in canvas.node_ids]  # recorded before a graph change; never lost
    if stray:
        layers.append(stray)
    tallest = max((len(col) for col in layers), default=1)
    names = {n.get("id"): n for n in (graph or {}).get("nodes") or [] if isinstance(n, Mapping)}

    boxes: dict[str, NodeBox] = {}
    column_of: dict[str, int] = {}
    for col, column in enumerate(layers):
        # Centre short columns against the tallest one.
        offset = (tallest - len(column)) * (NODE_H + ROW_GAP) / 2
        for row, node_id in enumerate(column):
            node = names.get(node_id, {})
            seen = by_node.get(node_id, [])
            name = str(node.get("name") or "")
            boxes[node_id] = NodeBox(
                node_id=node_id,
                name=name,
                label=fit_text(name or node_id, NAME_ROOM, bold=True),
                meta=fit_text(node_id, META_ROOM if seen else NAME_ROOM),
                node_type=str(node.get("type") or ""),
                x=MARGIN + col * (NODE_W + COL_GAP),
                y=round(MARGIN_TOP + offset + row * (NODE_H + ROW_GAP)),
                status=seen[-1].status if seen else "",
                visit_count=len(seen),
                failed=sum(1 for v in seen if v.status == "FAILED"),
                skip=node.get("failStrategy") == "skip",
                href=node_href(node_id, seen) if seen else None,
            )
            column_of[node_id] = col

    fired: Counter[tuple[str, str]] = Counter()
    for v in visits:
        for parent_uuid in dict.fromkeys(v.parent_uuids):
            parent = by_uuid.get(parent_uuid)
            if parent is not None:
                fired[(parent.node_id, v.node_id)] += 1

    columns: dict[int, list[NodeBox]] = defaultdict(list)
    for box in boxes.values():
        columns[column_of[box.node_id]].append(box)
    hops = [
        _hop(boxes[s], boxes[t], 0, EDGE, column_of, columns)
        for s, t in _edge_order(graph, canvas)
        if (s, t) not in fired and s in boxes and t in boxes
    ]
    for (s, t), count in fired.items():
        kind = hop_kind(parent_node=s, child_node=t, canvas=canvas)
        hops.append(_hop(boxes[s], boxes[t], count, kind, column_of, columns))

    width = MARGIN * 2 + len(layers) * NODE_W + max(len(layers) - 1, 0) * COL_GAP
    height = MARGIN_TOP + MARGIN + tallest * NODE_H + max(tallest - 1, 0) * ROW_GAP + 30
    return Picture(width=width, height=height, nodes=list(boxes.values()), hops=hops)


def text_width(text: str, *, size: float = 12, bold: bool = False) -> float:
    """An estimate of ``text``'s width in pixels in the page's sans-serif font:
    a wide (CJK) character is as wide as the font is high, others about 0.6 of
    it (a little more in bold). Errs wide, so a name that fits is never cut."""
    narrow = 0.62 if bold else 0.58
    return sum(size if unicodedata.east_asian_width(c) in "WF" else size * narrow for c in text)


def fit_text(text: str, room: float, *, bold: bool = False) -> str:
    """``text`` whole when it fits in ``room`` pixels, else cut with "…" to fit:
    names are cut only when the box has no room for them."""
    if text_width(text, bold=bold) <= room:
        return text
    kept = ""
    for char in text:
        if text_width(kept + char + "…", bold=bold) > room:
            break
        kept += char
    return kept + "…"


Point = tuple[float, float]


def _hop(
    src: NodeBox,
    dst: NodeBox,
    count: int,
    kind: str,
    column_of: Mapping[str, int],
    columns: Mapping[int, list[NodeBox]],
) -> Hop:
    """SVG geometry: forward hops run right side → left side; a hop to the same
    node loops above it; any other hop (back, or within a column) arcs above
    the boxes so it never hides behind the forward lines. A forward hop that
    skips columns and would run through a box on the way goes over them."""
    if src.node_id == dst.node_id:
        x0, x1, y = src.x + NODE_W * 0.3, src.x + NODE_W * 0.7, src.y
        points = ((x0, y), (x0 - 10, y - 45), (x1 + 10, y - 45), (x1, y))
    elif column_of[dst.node_id] > column_of[src.node_id]:
        x0, y0, x1, y1 = src.x + NODE_W, src.cy, dst.x, dst.cy
        bend = (x1 - x0) / 2
        points = ((x0, y0), (x0 + bend, y0), (x1 - bend, y1), (x1, y1))
        first, last = column_of[src.node_id] + 1, column_of[dst.node_id]
        if last - first > MAX_CHECKED_COLUMNS:
            # A long skip is drawn over every box without testing each one: no
            # box is higher than MARGIN_TOP, and the cost stays bounded on any canvas.
            return _over(src, dst, count, kind, top=MARGIN_TOP - SKIP_LIFT)
        # The curve's y stays between y0 and y1, so only boxes in that band can be hit.
        low, high = min(y0, y1) - NODE_H - BOX_PAD, max(y0, y1) + BOX_PAD
        between = [box for col in range(first, last) for box in _in_band(columns[col], low, high)]
        if any(_crosses(points, box) for box in between):
            return _over(src, dst, count, kind, top=min(box.y for box in [src, dst, *between]) - SKIP_LIFT)
    else:
        x0, y0, x1, y1 = src.cx, src.y, dst.cx + (8 if kind == JUMP else 0), dst.y
        lift = 40 + 12 * abs(column_of[src.node_id] - column_of[dst.node_id])
        top = max(8.0, min(y0, y1) - lift)
        points = ((x0, y0), (x0, top), (x1, top), (x1, y1))
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = points
    d = f"M{ax:.1f},{ay:.1f} C{bx:.1f},{by:.1f} {cx:.1f},{cy:.1f} {dx:.1f},{dy:.1f}"
    # The curve's midpoint (t = 0.5) carries the count.
    mx, my = _bezier(points, 0.5)
    return Hop(source=src.node_id, target=dst.node_id, kind=kind, count=count, d=d, label_x=mx, label_y=my - 4)


def _in_band(column: list[NodeBox], low: float, high: float) -> list[NodeBox]:
    """The boxes of ``column`` (sorted by y) whose top lies in ``[low, high]``."""
    tops = [box.y for box in column]
    return column[bisect.bisect_left(tops, low) : bisect.bisect_right(tops, high)]


def _over(src: NodeBox, dst: NodeBox, count: int, kind: str, *, top: float) -> Hop:
    """A forward hop drawn as a bracket over the boxes between: out of the
    right side of ``src``, up in the gap after its column, across at ``top``,
    down in the gap before ``dst``'s column and into its left side. Gaps hold
    no boxes, so it clears them all as long as ``top`` is above the ones between."""
    top = max(8.0, top)
    sx, sy, dx, dy = src.x + NODE_W, src.cy, dst.x, dst.cy
    gx0, gx1 = sx + COL_GAP * 0.3, dx - COL_GAP * 0.3
    r = 10.0
    d = (
        f"M{sx:.1f},{sy:.1f} L{gx0 - r:.1f},{sy:.1f} Q{gx0:.1f},{sy:.1f} {gx0:.1f},{sy - r:.1f} "
        f"L{gx0:.1f},{top + r:.1f} Q{gx0:.1f},{top:.1f} {gx0 + r:.1f},{top:.1f} "
        f"L{gx1 - r:.1f},{top:.1f} Q{gx1:.1f},{top:.1f} {gx1:.1f},{top + r:.1f} "
        f"L{gx1:.1f},{dy - r:.1f} Q{gx1:.1f},{dy:.1f} {gx1 + r:.1f},{dy:.1f} L{dx:.1f},{dy:.1f}"
    )
    return Hop(
        source=src.node_id, target=dst.node_id, kind=kind, count=count, d=d, label_x=(gx0 + gx1) / 2, label_y=top - 4
    )


def _bezier(points, t: float) -> Point:
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = points
    u = 1 - t
    return (
        u**3 * ax + 3 * u * u * t * bx + 3 * u * t * t * cx + t**3 * dx,
        u**3 * ay + 3 * u * u * t * by + 3 * u * t * t * cy + t**3 * dy,
    )


def _crosses(points, box: NodeBox, samples: int = 48) -> bool:
    """Does the cubic curve through ``points`` pass within BOX_PAD of ``box``?"""
    left, right = box.x - BOX_PAD, box.x + NODE_W + BOX_PAD
    upper, lower = box.y - BOX_PAD, box.y + NODE_H + BOX_PAD
    return any(
        left <= x <= right and upper <= y <= lower
        for x, y in (_bezier(points, i / samples) for i in range(samples + 1))
    )


__all__ = ["BACKTRACK", "EDGE", "JUMP", "Hop", "NodeBox", "Picture", "canvas_layers", "graph_picture"]
