"""Parents, hops and predecessor path graphs of visits (SPEC §4.2).

Pure: plain data in, plain data out, no Django import (networkx computes the
canvas's reachability). The canvas is the run's ``graph`` dict (``{nodes:
[{id, …}], edges: [{source, target}]}``) or a :class:`Canvas` built from it
once (preferred when many calls share a canvas: which node reaches which is
computed once, near-linearly, on the first question). Visits are
:class:`VisitNode` values; :func:`visit_node_of` builds one from anything with
the same attributes (a ``Visit`` row included).

Parent links always point to visits registered earlier (lower sortOrder), so
the visit graph is acyclic; the canvas may have cycles, and nothing here can
hang on either.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

MAX_PATHS = 100
MAX_PATH_DEPTH = 200

#: Visit statuses that count as "ended" when deriving DAG parents (SPEC §4.2).
ENDED_STATUSES = frozenset({"SUCCESS", "FAILED", "SKIPPED"})

EDGE = "edge"
BACKTRACK = "backtrack"
JUMP = "jump"


@dataclass(frozen=True)
class VisitNode:
    """What the resolver needs of one visit.

    ``parent_uuids`` are visit uuid strings (``()`` marks a root); ``status`` is
    the visit status string, used only by :func:`derive_parents`;
    ``parent_kinds``, when known, the :func:`hop_kind` of each parent link (in
    the order of ``parent_uuids``, as ``Visit.hop_kinds`` stores them), so
    paths need no canvas.
    """

    visit_uuid: str
    node_id: str
    sort_order: int
    parent_uuids: tuple[str, ...] = ()
    status: str = ""
    parent_kinds: tuple[str, ...] = ()


def ancestry_of(parents: Iterable[tuple[int, bytes]]) -> bytes:
    """The ancestor set of a new visit as bits, from its parents' ``(sort_order, ancestry)``.

    Bit ``n`` (little-endian: byte ``n // 8``, bit ``n % 8``) is set when the
    run's visit with sortOrder ``n`` is an ancestor: each parent and every
    ancestor of each parent. A root's is ``b""``. A visit's ancestors never
    change once it is registered, so this is computed once and a scope check
    is one bit test (SPEC §4.2, §4.5; issue 14). 200 visits take 26 bytes.
    """
    bits = 0
    for sort_order, ancestry in parents:
        bits |= int.from_bytes(ancestry, "little") | 1 << sort_order
    return bits.to_bytes((bits.bit_length() + 7) // 8, "little")


def ancestry_sort_orders(ancestry: bytes) -> list[int]:
    """The sortOrders whose bit is set in ``ancestry`` (see :func:`ancestry_of`), ascending."""
    bits = int.from_bytes(ancestry, "little")
    return [n for n in range(bits.bit_length()) if bits >> n & 1]


def visit_node_of(visit) -> VisitNode:
    """A :class:`VisitNode` from any object with ``visit_uuid``, ``node_id``,
    ``sort_order``, ``parent_uuids`` and ``status`` attributes (e.g. a ``Visit``)."""
    return VisitNode(
        visit_uuid=str(visit.visit_uuid),
        node_id=visit.node_id,
        sort_order=visit.sort_order,
        parent_uuids=tuple(str(p) for p in (visit.parent_uuids or ())),
        status=str(visit.status or ""),
    )


class Canvas:
    """A run's canvas with edge lookups and reachability computed once.

    Built from ``{nodes: [{id}], edges: [{source, target}]}``; malformed entries
    are ignored (validation belongs to :mod:`contextquery.canvas`).
    """

    __slots__ = ("node_ids", "edges", "predecessors", "_reach")

    def __init__(self, graph: Mapping | None):
        graph = graph or {}
        nodes = graph.get("nodes") or []
        edges = graph.get("edges") or []
        self.node_ids: list[str] = [n["id"] for n in nodes if isinstance(n, Mapping) and isinstance(n.get("id"), str)]
        self.edges: set[tuple[str, str]] = set()
        # Canvas predecessors in edge order, so derived parents are deterministic.
        self.predecessors: dict[str, list[str]] = {}
        for e in edges:
            if not isinstance(e, Mapping):
                continue
            s, t = e.get("source"), e.get("target")
            if not isinstance(s, str) or not isinstance(t, str) or (s, t) in self.edges:
                continue
            self.edges.add((s, t))
            self.predecessors.setdefault(t, []).append(s)
        self._reach: tuple[dict[str, int], dict[str, int]] | None = None

    def has_edge(self, source: str, target: str) -> bool:
        return (source, target) in self.edges

    def is_ancestor(self, node_id: str, of: str) -> bool:
        """Whether the canvas has a path from ``node_id`` to ``of`` (``of`` itself
        only through a cycle). The reachability of every node is computed once,
        on the first question, in time near-linear in the canvas: strongly
        connected components, then ancestor bitsets over their condensation."""
        if self._reach is None:
            self._reach = self._reachability()
        bit_of, ancestors_of = self._reach
        bit = bit_of.get(node_id)
        return bit is not None and bool(ancestors_of.get(of, 0) >> bit & 1)

    def _reachability(self) -> tuple[dict[str, int], dict[str, int]]:
        graph = nx.DiGraph()
        graph.add_nodes_from(self.node_ids)
        graph.add_edges_from(self.edges)
        dag = nx.condensation(graph)
        members = dag.graph["mapping"]  # node -> component
        bit_of = {node: i for i, node in enumerate(graph.nodes)}
        component_bits: dict[int, int] = defaultdict(int)
        for node, component in members.items():
            component_bits[component] |= 1 << bit_of[node]
        # Ancestors of a component: its predecessors' ancestors and members,
        # and its own members when it holds a cycle (two nodes, or a self-loop).
        ancestors: dict[int, int] = {}
        for component in nx.topological_sort(dag):
            bits = 0
            for pred in dag.predecessors(component):
                bits |= ancestors[pred] | component_bits[pred]
            cyclic = len(dag.nodes[component]["members"]) > 1 or any(
                (n, n) in self.edges for n in dag.nodes[component]["members"]
            )
            ancestors[component] = bits | (component_bits[component] if cyclic else 0)
        return bit_of, {node: ancestors[component] for node, component in members.items()}

    def ancestors(self, node_id: str) -> frozenset[str]:
        """Every node with a canvas path to ``node_id`` (itself only via a cycle)."""
        return frozenset(n for n in self.node_ids if self.is_ancestor(n, of=node_id))


def as_canvas(canvas: Canvas | Mapping | None) -> Canvas:
    """``canvas`` itself when already a :class:`Canvas`, else one built from the graph dict."""
    return canvas if isinstance(canvas, Canvas) else Canvas(canvas)


def hop_kind(*, parent_node: str, child_node: str, canvas: Canvas | Mapping) -> str:
    """Classify a hop parent → child (SPEC §4.2): ``"edge"`` | ``"backtrack"`` | ``"jump"``.

    ``edge`` when the canvas has the edge; ``backtrack`` when the child's node
    is the parent's node or one of its canvas ancestors (the planner flew back);
    ``jump`` otherwise. Cycle-safe.
    """
    canvas = as_canvas(canvas)
    if canvas.has_edge(parent_node, child_node):
        return EDGE
    if child_node == parent_node or canvas.is_ancestor(child_node, of=parent_node):
        return BACKTRACK
    return JUMP


def derive_parents(*, mode: str, node_id: str, canvas: Canvas | Mapping, visits: Iterable[VisitNode]) -> list[str]:
    """Parents of a new visit of ``node_id`` when the engine sent none (SPEC §4.2).

    ``visits`` are the run's visits registered so far. DAG: for each canvas
    predecessor node, its latest ended visit (SUCCESS, FAILED or SKIPPED);
    AGENTIC: the latest registered visit. Returns visit uuids by sortOrder;
    ``[]`` (a root) when there is none.
    """
    visits = list(visits)
    if mode == "AGENTIC":
        if not visits:
            return []
        return [max(visits, key=lambda v: v.sort_order).visit_uuid]
    canvas = as_canvas(canvas)
    preds = set(canvas.predecessors.get(node_id, ()))
    latest: dict[str, VisitNode] = {}
    for v in visits:
        if v.node_id in preds and v.status in ENDED_STATUSES:
            best = latest.get(v.node_id)
            if best is None or v.sort_order > best.sort_order:
                latest[v.node_id] = v
    return [v.visit_uuid for v in sorted(latest.values(), key=lambda v: v.sort_order)]


def ancestors(*, visit_uuid: str, visits_by_uuid: Mapping[str, VisitNode]) -> list[str]:
    """Uuids of every visit reachable from ``visit_uuid`` through parent links, by sortOrder.

    Excludes the visit itself; parents missing from ``visits_by_uuid`` are ignored.
    """
    return [v.visit_uuid for v in _ancestor_nodes(visit_uuid, visits_by_uuid)]


def _ancestor_nodes(visit_uuid: str, by_uuid: Mapping[str, VisitNode]) -> list[VisitNode]:
    start = by_uuid.get(visit_uuid)
    if start is None:
        return []
    seen = {visit_uuid}
    found: list[VisitNode] = []
    stack = list(start.parent_uuids)
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        node = by_uuid.get(u)
        if node is None:
            continue
        found.append(node)
        stack.extend(node.parent_uuids)
    found.sort(key=lambda v: v.sort_order)
    return found


@dataclass(frozen=True)
class Path:
    """One chain root → V: node ids and visit uuids in order, V last."""

    sequence: list[str]
    visit_uuids: list[str]
    has_backtrack: bool
    truncated: bool = False

    def as_dict(self) -> dict:
        return {
            "sequence": list(self.sequence),
            "visitUuids": list(self.visit_uuids),
            "hasBacktrack": self.has_backtrack,
            "truncated": self.truncated,
        }


@dataclass(frozen=True)
class PathGraph:
    """The predecessor path graph of a visit (SPEC §4.2)."""

    paths: list[Path]
    visit_uuids: list[str]
    node_ids: list[str]
    backtrack_edge_keys: list[str]
    truncated: bool = False

    def as_dict(self) -> dict:
        """The wire shape: ``{visitUuids, nodeIds, paths, backtrackEdgeKeys, truncated}``."""
        return {
            "visitUuids": list(self.visit_uuids),
            "nodeIds": list(self.node_ids),
            "paths": [p.as_dict() for p in self.paths],
            "backtrackEdgeKeys": list(self.backtrack_edge_keys),
            "truncated": self.truncated,
        }


def path_graph(
    *,
    visit_uuid: str,
    visits: Iterable[VisitNode] | Mapping[str, VisitNode],
    canvas: Canvas | Mapping | None = None,
    max_paths: int = MAX_PATHS,
    max_depth: int = MAX_PATH_DEPTH,
) -> PathGraph:
    """The predecessor path graph of visit ``visit_uuid`` (SPEC §4.2).

    ``visits``: the run's visits (a list, or a dict by uuid); ``canvas`` is
    read only for hops whose kind the visits do not carry. ``paths`` are the
    chains from a root to V, V last, in lexicographic order of their sortOrder
    sequences; at most ``max_paths`` whole paths (``truncated`` on the graph when
    more exist); a chain longer than ``max_depth`` keeps its last ``max_depth``
    visits with ``truncated`` on that path. A visit not in ``visits`` gives an
    empty graph.

    Cost: the paths are enumerated by a depth-first walk from the roots over
    the visits that reach V only, children in sortOrder, so every branch ends
    at V and the walk stops after ``max_paths + 1`` paths — linear in
    ``max_paths × depth`` whatever the number of chains (diamonds included).
    """
    by_uuid = visits if isinstance(visits, Mapping) else {v.visit_uuid: v for v in visits}
    target = by_uuid.get(visit_uuid)
    if target is None:
        return PathGraph(paths=[], visit_uuids=[], node_ids=[], backtrack_edge_keys=[])
    canvas = as_canvas(canvas)
    # Hop kinds stored with the visits (their lineage) spare the canvas.
    backtrack: dict[tuple[str, str], bool] = {}
    for v in by_uuid.values():
        for parent, kind in zip(v.parent_uuids, v.parent_kinds, strict=False):
            above = by_uuid.get(parent)
            if above is not None:
                backtrack[(above.node_id, v.node_id)] = kind == BACKTRACK

    members = _ancestor_nodes(visit_uuid, by_uuid)
    members.append(target)
    member_uuids = [v.visit_uuid for v in members]
    node_ids = list(dict.fromkeys(v.node_id for v in members))

    # Work on indexes into `members` (sorted by sortOrder, V last). A parent link
    # counts only from a lower index — a visit registered earlier, as the
    # recording rules guarantee — so the walk is over a DAG and cannot cycle,
    # and children lists come out in ascending sortOrder.
    index = {u: i for i, u in enumerate(member_uuids)}
    nodes = [v.node_id for v in members]
    children: list[list[int]] = [[] for _ in members]
    roots: list[int] = []
    for i, v in enumerate(members):
        linked = False
        for p in v.parent_uuids:
            j = index.get(p)
            if j is not None and j < i and (not children[j] or children[j][-1] != i):
                children[j].append(i)
                linked = True
        if not linked:
            roots.append(i)
    target_index = len(members) - 1

    paths: list[Path] = []
    edge_keys: dict[str, None] = {}
    truncated = False
    # Iterative DFS from each root: every member reaches V, so every branch ends
    # in a path and the walk stops after max_paths + 1 of them. `chain` holds
    # indexes, with node ids and uuids alongside so a path is two C-level
    # slices; `bt_positions` the chain positions k whose incoming hop
    # (chain[k-1] -> chain[k]) is a backtrack; `iters` the children left per level.
    for root in roots:
        if truncated:
            break
        chain = [root]
        chain_nodes = [nodes[root]]
        chain_uuids = [member_uuids[root]]
        bt_positions: list[int] = []
        iters = [iter(children[root])]
        while chain:
            top = chain[-1]
            if top == target_index:
                if len(paths) == max_paths:
                    truncated = True
                    break
                start = max(0, len(chain) - max_depth)
                # Only hops inside the kept part count: the hop into `start` comes from a dropped visit.
                kept_bt = [k for k in bt_positions if k > start]
                for k in kept_bt:
                    edge_keys.setdefault(f"{chain_nodes[k - 1]}->{chain_nodes[k]}", None)
                paths.append(
                    Path(
                        sequence=chain_nodes[start:],
                        visit_uuids=chain_uuids[start:],
                        has_backtrack=bool(kept_bt),
                        truncated=start > 0,
                    )
                )
                nxt = None
            else:
                nxt = next(iters[-1], None)
            if nxt is None:
                chain.pop()
                chain_nodes.pop()
                chain_uuids.pop()
                iters.pop()
                if bt_positions and bt_positions[-1] == len(chain):
                    bt_positions.pop()
                continue
            hop = (nodes[top], nodes[nxt])
            is_back = backtrack.get(hop)
            if is_back is None:
                is_back = backtrack[hop] = hop_kind(parent_node=hop[0], child_node=hop[1], canvas=canvas) == BACKTRACK
            if is_back:
                bt_positions.append(len(chain))
            chain.append(nxt)
            chain_nodes.append(hop[1])
            chain_uuids.append(member_uuids[nxt])
            iters.append(iter(children[nxt]))

    return PathGraph(
        paths=paths,
        visit_uuids=member_uuids,
        node_ids=node_ids,
        backtrack_edge_keys=list(edge_keys),
        truncated=truncated,
    )
