"""The run page's picture (SPEC §4.6): ``contextquery.graph_layout`` is pure, so no database."""

import re
from itertools import pairwise

import pytest

from contextquery.graph_layout import (
    COL_GAP,
    NAME_ROOM,
    NODE_H,
    NODE_W,
    canvas_layers,
    fit_text,
    graph_picture,
    text_width,
)
from contextquery.paths import VisitNode
from tests.contextquery.factories import CHAIN, TWO_BRANCHES, canvas


def chain_of(*nodes, status="SUCCESS"):
    """Visits of ``nodes`` in order, each the parent of the next."""
    visits = []
    for i, node in enumerate(nodes, start=1):
        parents = (visits[-1].visit_uuid,) if visits else ()
        visits.append(VisitNode(visit_uuid=f"v{i}", node_id=node, sort_order=i, parent_uuids=parents, status=status))
    return visits


def hops_by_key(picture):
    return {hop.key: hop for hop in picture.hops}


def path_points(d: str, samples: int = 24) -> list[tuple[float, float]]:
    """Points along an SVG path made of absolute M, L, Q and C commands."""
    points, pen = [], (0.0, 0.0)
    for command, args in re.findall(r"([MLQC])([^MLQC]*)", d):
        xy = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", args)]
        ctrl = [pen] + list(zip(xy[::2], xy[1::2], strict=False))
        if command == "M":
            pen = ctrl[-1]
            points.append(pen)
            continue
        for i in range(1, samples + 1):
            t = i / samples
            # De Casteljau over the pen and the command's points (line, quadratic or cubic).
            level = ctrl
            while len(level) > 1:
                level = [((1 - t) * a[0] + t * b[0], (1 - t) * a[1] + t * b[1]) for a, b in pairwise(level)]
            points.append(level[0])
        pen = ctrl[-1]
    return points


def inside(point, box, pad=2) -> bool:
    x, y = point
    return box.x - pad <= x <= box.x + NODE_W + pad and box.y - pad <= y <= box.y + NODE_H + pad


def test_two_branches_into_g_are_laid_out_in_four_columns():
    assert canvas_layers(TWO_BRANCHES) == [["A", "D"], ["B", "E"], ["C", "F"], ["G"]]


def test_columns_run_left_to_right():
    boxes = {box.node_id: box for box in graph_picture(graph=CHAIN, visits=[]).nodes}
    assert [boxes[n].x for n in "ABCG"] == [boxes["A"].x + i * (NODE_W + COL_GAP) for i in range(4)]


def test_a_cyclic_canvas_still_gets_layers():
    layers = canvas_layers(canvas("AB BC CA CD"))
    assert sorted(n for column in layers for n in column) == ["A", "B", "C", "D"]
    assert len(layers) == 4


def test_a_lone_node_is_placed():
    assert canvas_layers(canvas("AB", nodes="Z")) == [["A", "Z"], ["B"]]


def test_the_flight_back_is_a_backtrack_hop_and_other_hops_are_edges():
    picture = graph_picture(graph=CHAIN, visits=chain_of("A", "B", "C", "G", "C"))
    hops = hops_by_key(picture)
    assert hops["G->C"].kind == "backtrack" and hops["G->C"].count == 1
    assert {hops[k].kind for k in ("A->B", "B->C", "C->G")} == {"edge"}
    assert picture.backtrack_keys == ["G->C"]


def test_a_hop_without_a_canvas_edge_is_a_jump():
    hops = hops_by_key(graph_picture(graph=CHAIN, visits=chain_of("A", "G")))
    assert hops["A->G"].kind == "jump"


def test_canvas_edges_that_never_fired_are_drawn_with_count_zero():
    hops = hops_by_key(graph_picture(graph=CHAIN, visits=chain_of("A", "B")))
    assert hops["A->B"].count == 1 and hops["B->C"].count == 0 and hops["C->G"].count == 0


def test_repeated_hops_are_drawn_once_with_their_count():
    hops = hops_by_key(graph_picture(graph=canvas("AB BA"), visits=chain_of("A", "B", "A", "B")))
    assert hops["A->B"].count == 2 and hops["B->A"].count == 1


def test_a_node_shows_its_latest_status_visit_count_and_failures():
    visits = chain_of("A", "B")
    visits.append(VisitNode(visit_uuid="v3", node_id="B", sort_order=3, parent_uuids=("v1",), status="FAILED"))
    boxes = {box.node_id: box for box in graph_picture(graph=CHAIN, visits=visits).nodes}
    assert (boxes["B"].status, boxes["B"].visit_count, boxes["B"].failed) == ("FAILED", 2, 1)
    assert (boxes["C"].status, boxes["C"].visit_count, boxes["C"].href) == ("", 0, None)


def test_each_visited_node_gets_the_link_the_caller_chooses():
    picture = graph_picture(
        graph=CHAIN, visits=chain_of("A", "B", "B"), node_href=lambda node, visits: f"/{node}/{len(visits)}"
    )
    assert {box.node_id: box.href for box in picture.nodes} == {"A": "/A/1", "B": "/B/2", "C": None, "G": None}


def test_a_backward_hop_arcs_above_the_boxes():
    picture = graph_picture(graph=CHAIN, visits=chain_of("A", "B", "C", "G", "C"))
    top = min(box.y for box in picture.nodes)
    assert hops_by_key(picture)["G->C"].label_y < top


def test_long_names_are_clipped_on_the_box_but_kept_whole():
    graph = {"nodes": [{"id": "A", "name": "A very long node name that does not fit"}], "edges": []}
    (box,) = graph_picture(graph=graph, visits=[]).nodes
    assert box.label.endswith("…") and text_width(box.label, bold=True) <= NAME_ROOM
    assert box.name.startswith("A very long")


@pytest.mark.parametrize("name", ["Collect sources", "Summarise sources", "Write the report", "写报告并发送给客户"])
def test_a_name_that_fits_its_box_is_never_cut(name):
    graph = {"nodes": [{"id": "A", "name": name}], "edges": []}
    (box,) = graph_picture(graph=graph, visits=[]).nodes
    assert box.label == name


def test_wide_characters_count_double_when_a_name_is_fitted():
    cut = fit_text("节" * 20, NAME_ROOM, bold=True)
    assert cut.endswith("…") and len(cut) < 12


def skip_run():
    """The skip demo: A→B→C plus A→C; C's parents are A#1 and B#1."""
    a = VisitNode(visit_uuid="a", node_id="A", sort_order=1, parent_uuids=(), status="SUCCESS")
    b = VisitNode(visit_uuid="b", node_id="B", sort_order=2, parent_uuids=("a",), status="FAILED")
    c = VisitNode(visit_uuid="c", node_id="C", sort_order=3, parent_uuids=("a", "b"), status="SUCCESS")
    return graph_picture(graph=canvas("AB BC AC", skip="B"), visits=[a, b, c])


def test_a_hop_that_skips_a_column_goes_around_the_box_in_between():
    picture = skip_run()
    boxes = {box.node_id: box for box in picture.nodes}
    assert boxes["A"].y == boxes["B"].y == boxes["C"].y  # one row: a straight line would cross B
    points = path_points(hops_by_key(picture)["A->C"].d)
    assert not any(inside(point, boxes["B"]) for point in points)
    assert points[0] == (boxes["A"].x + NODE_W, boxes["A"].cy) and points[-1] == (boxes["C"].x, boxes["C"].cy)


def test_a_hop_that_skips_a_column_carries_its_count_above_the_row():
    picture = skip_run()
    top = min(box.y for box in picture.nodes)
    assert hops_by_key(picture)["A->C"].label_y < top


def test_a_hop_between_neighbouring_columns_stays_a_single_curve():
    d = hops_by_key(skip_run())["A->B"].d
    assert d.startswith("M") and d.count("C") == 1 and "L" not in d and "Q" not in d
