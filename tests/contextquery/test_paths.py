"""The pure path resolver (SPEC §4.2): hops, derived parents, path graphs. No database."""

import pytest

from contextquery.paths import (
    BACKTRACK,
    EDGE,
    JUMP,
    Canvas,
    VisitNode,
    ancestors,
    derive_parents,
    hop_kind,
    path_graph,
)
from tests.contextquery.factories import CHAIN, DIAMOND, TWO_BRANCHES, canvas


def history(*steps, status="SUCCESS"):
    """Visits in registration order from ``"name:Node<-parent,parent"`` strings.

    ``"c2:C<-g"`` is a visit named c2 of node C whose parent is visit g; no
    ``<-`` makes a root. The name doubles as the visit uuid.
    """
    visits = []
    for order, step in enumerate(steps, start=1):
        head, _, parents = step.partition("<-")
        name, _, node = head.partition(":")
        visits.append(VisitNode(name, node, order, tuple(p for p in parents.split(",") if p), status))
    return visits


def sequences(graph):
    return [p.sequence for p in graph.paths]


def test_two_dag_branches_into_g_are_two_paths():
    visits = history("a:A", "d:D", "b:B<-a", "e:E<-d", "c:C<-b", "f:F<-e", "g:G<-c,f")
    graph = path_graph(visit_uuid="g", visits=visits, canvas=TWO_BRANCHES)
    assert sequences(graph) == [["A", "B", "C", "G"], ["D", "E", "F", "G"]]
    assert [p.visit_uuids for p in graph.paths] == [["a", "b", "c", "g"], ["d", "e", "f", "g"]]
    assert graph.backtrack_edge_keys == [] and not graph.truncated


def test_ancestor_visits_are_listed_by_sort_order_with_node_ids_by_first_occurrence():
    visits = history("a:A", "d:D", "b:B<-a", "e:E<-d", "c:C<-b", "f:F<-e", "g:G<-c,f")
    graph = path_graph(visit_uuid="g", visits=visits, canvas=TWO_BRANCHES)
    assert graph.visit_uuids == ["a", "d", "b", "e", "c", "f", "g"]
    assert graph.node_ids == ["A", "D", "B", "E", "C", "F", "G"]


def test_a_flight_back_is_one_path_with_a_backtrack_hop():
    visits = history("a:A", "b:B<-a", "c1:C<-b", "g:G<-c1", "c2:C<-g")
    graph = path_graph(visit_uuid="c2", visits=visits, canvas=CHAIN)
    assert sequences(graph) == [["A", "B", "C", "G", "C"]]
    assert graph.paths[0].has_backtrack
    assert graph.backtrack_edge_keys == ["G->C"]
    assert graph.node_ids == ["A", "B", "C", "G"]


def test_the_wire_shape_uses_camel_case_keys():
    visits = history("a:A", "b:B<-a", "c1:C<-b", "g:G<-c1", "c2:C<-g")
    wire = path_graph(visit_uuid="c2", visits=visits, canvas=CHAIN).as_dict()
    assert wire == {
        "visitUuids": ["a", "b", "c1", "g", "c2"],
        "nodeIds": ["A", "B", "C", "G"],
        "paths": [
            {
                "sequence": ["A", "B", "C", "G", "C"],
                "visitUuids": ["a", "b", "c1", "g", "c2"],
                "hasBacktrack": True,
                "truncated": False,
            }
        ],
        "backtrackEdgeKeys": ["G->C"],
        "truncated": False,
    }


def test_a_diamond_gives_one_path_per_branch_in_sort_order():
    visits = history("a:A", "c:C<-a", "b:B<-a", "d:D<-b,c")
    graph = path_graph(visit_uuid="d", visits=visits, canvas=DIAMOND)
    # C was registered before B, so the path through C sorts first.
    assert sequences(graph) == [["A", "C", "D"], ["A", "B", "D"]]


def test_an_untaken_branch_sent_explicitly_is_not_a_path():
    visits = history("a:A", "b:B<-a", "d:D<-b")
    graph = path_graph(visit_uuid="d", visits=visits, canvas=DIAMOND)
    assert sequences(graph) == [["A", "B", "D"]]


def test_a_derived_parent_list_leaves_out_an_untaken_branch():
    visits = history("a:A", "b:B<-a")
    assert derive_parents(mode="DAG", node_id="D", canvas=DIAMOND, visits=visits) == ["b"]


def test_dag_parents_are_the_latest_ended_visit_of_each_predecessor():
    visits = history("a:A", "b1:B<-a", "b2:B<-a") + [VisitNode("c", "C", 4, ("a",), "RUNNING")]
    assert derive_parents(mode="DAG", node_id="D", canvas=DIAMOND, visits=visits) == ["b2"]


def test_a_dag_node_without_ended_predecessors_is_a_root():
    visits = [VisitNode("a", "A", 1, (), "RUNNING")]
    assert derive_parents(mode="DAG", node_id="B", canvas=CHAIN, visits=visits) == []


def test_agentic_parent_is_the_latest_registered_visit_whatever_its_status():
    visits = history("a:A", "b:B<-a") + [VisitNode("c", "C", 3, ("b",), "RUNNING")]
    assert derive_parents(mode="AGENTIC", node_id="A", canvas=CHAIN, visits=visits) == ["c"]


def test_the_first_agentic_visit_is_a_root():
    assert derive_parents(mode="AGENTIC", node_id="A", canvas=CHAIN, visits=[]) == []


def test_a_hop_along_a_canvas_edge_is_an_edge():
    assert hop_kind(parent_node="B", child_node="C", canvas=CHAIN) == EDGE


def test_a_hop_to_an_ancestor_is_a_backtrack():
    assert hop_kind(parent_node="G", child_node="A", canvas=CHAIN) == BACKTRACK


def test_a_hop_between_unrelated_nodes_is_a_jump_not_a_backtrack():
    assert hop_kind(parent_node="C", child_node="E", canvas=TWO_BRANCHES) == JUMP
    visits = history("a:A", "b:B<-a", "c:C<-b", "e:E<-c")
    graph = path_graph(visit_uuid="e", visits=visits, canvas=TWO_BRANCHES)
    assert not graph.paths[0].has_backtrack and graph.backtrack_edge_keys == []


def test_a_self_loop_edge_is_an_edge_and_without_it_a_backtrack():
    assert hop_kind(parent_node="A", child_node="A", canvas=canvas("AA AB")) == EDGE
    assert hop_kind(parent_node="A", child_node="A", canvas=CHAIN) == BACKTRACK


def test_a_repeated_node_without_a_self_loop_edge_is_a_backtrack_on_the_path():
    visits = history("a1:A", "a2:A<-a1")
    graph = path_graph(visit_uuid="a2", visits=visits, canvas=CHAIN)
    assert graph.backtrack_edge_keys == ["A->A"] and graph.paths[0].has_backtrack


def test_a_flight_back_to_the_root_is_a_backtrack():
    visits = history("a1:A", "b:B<-a1", "c:C<-b", "g:G<-c", "a2:A<-g")
    graph = path_graph(visit_uuid="a2", visits=visits, canvas=CHAIN)
    assert sequences(graph) == [["A", "B", "C", "G", "A"]]
    assert graph.backtrack_edge_keys == ["G->A"]


def test_cyclic_canvases_classify_hops_without_hanging():
    loop = Canvas(canvas("AB BC CA"))
    assert loop.ancestors("A") == {"A", "B", "C"}
    assert hop_kind(parent_node="C", child_node="A", canvas=loop) == EDGE
    assert hop_kind(parent_node="C", child_node="B", canvas=loop) == BACKTRACK
    assert hop_kind(parent_node="C", child_node="D", canvas=canvas("AB BC CA", nodes="D")) == JUMP


def test_a_path_graph_over_a_cyclic_canvas_terminates():
    visits = history("a1:A", "b1:B<-a1", "c1:C<-b1", "a2:A<-c1", "b2:B<-a2")
    graph = path_graph(visit_uuid="b2", visits=visits, canvas=canvas("AB BC CA"))
    assert sequences(graph) == [["A", "B", "C", "A", "B"]]
    assert graph.backtrack_edge_keys == []  # every hop is a canvas edge


def diamond_chain(count):
    """``count`` diamonds in a row: 2**count chains from the root to the last join."""
    steps, join = ["j0:J"], "j0"
    for i in range(1, count + 1):
        steps += [f"x{i}:X<-{join}", f"y{i}:Y<-{join}", f"j{i}:J<-x{i},y{i}"]
        join = f"j{i}"
    return history(*steps), join


def test_more_than_max_paths_chains_list_the_first_max_paths_and_flag_truncated():
    visits, last = diamond_chain(8)  # 256 chains
    graph = path_graph(visit_uuid=last, visits=visits, canvas=canvas("JX JY XJ YJ"))
    assert len(graph.paths) == 100 and graph.truncated
    assert graph.paths[0].visit_uuids[:3] == ["j0", "x1", "j1"]
    sort_order = {v.visit_uuid: v.sort_order for v in visits}
    orders = [[sort_order[u] for u in p.visit_uuids] for p in graph.paths]
    assert orders == sorted(orders) and len(set(map(tuple, orders))) == 100
    assert all(not p.truncated for p in graph.paths)


def test_exactly_max_paths_chains_are_not_truncated():
    visits, last = diamond_chain(3)  # 8 chains
    graph = path_graph(visit_uuid=last, visits=visits, canvas=canvas("JX JY XJ YJ"), max_paths=8)
    assert len(graph.paths) == 8 and not graph.truncated


def test_path_enumeration_stays_fast_when_chains_explode():
    visits, last = diamond_chain(66)  # 2**66 chains over 199 visits
    graph = path_graph(visit_uuid=last, visits=visits, canvas=canvas("JX JY XJ YJ"))
    assert len(graph.paths) == 100 and graph.truncated
    assert len(graph.visit_uuids) == 199


def test_a_chain_longer_than_max_depth_keeps_its_last_visits_and_is_flagged():
    steps = ["v1:A"] + [f"v{i}:{'ABCG'[(i - 1) % 4]}<-v{i - 1}" for i in range(2, 251)]
    graph = path_graph(visit_uuid="v250", visits=history(*steps), canvas=CHAIN)
    (path,) = graph.paths
    assert path.truncated and len(path.visit_uuids) == 200
    assert path.visit_uuids[0] == "v51" and path.visit_uuids[-1] == "v250"
    assert not graph.truncated and len(graph.visit_uuids) == 250


def test_a_backtrack_before_the_kept_part_of_a_long_chain_is_not_reported():
    steps = ["v1:G", "v2:A<-v1"] + [f"v{i}:B<-v{i - 1}" for i in range(3, 8)]
    graph = path_graph(visit_uuid="v7", visits=history(*steps), canvas=canvas("GA AB BB"), max_depth=5)
    assert graph.paths[0].visit_uuids == ["v3", "v4", "v5", "v6", "v7"]
    assert graph.backtrack_edge_keys == [] and not graph.paths[0].has_backtrack


def test_a_root_visit_has_one_path_of_itself():
    graph = path_graph(visit_uuid="a", visits=history("a:A"), canvas=CHAIN)
    assert sequences(graph) == [["A"]] and graph.visit_uuids == ["a"]


def test_an_unknown_visit_has_an_empty_graph():
    graph = path_graph(visit_uuid="nope", visits=history("a:A"), canvas=CHAIN)
    assert graph.paths == [] and graph.visit_uuids == [] and not graph.truncated


def test_ancestors_exclude_the_visit_siblings_and_later_visits():
    visits = history("a:A", "d:D", "b:B<-a", "e:E<-d", "c:C<-b", "f:F<-e", "g:G<-c,f")
    by_uuid = {v.visit_uuid: v for v in visits}
    assert ancestors(visit_uuid="c", visits_by_uuid=by_uuid) == ["a", "b"]
    assert ancestors(visit_uuid="g", visits_by_uuid=by_uuid) == ["a", "d", "b", "e", "c", "f"]


@pytest.mark.parametrize("graph", [None, {}, {"nodes": "x", "edges": [1, {"source": 2}]}])
def test_a_malformed_canvas_makes_every_hop_a_jump(graph):
    assert hop_kind(parent_node="A", child_node="B", canvas=graph) == JUMP
