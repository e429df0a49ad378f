"""The canvas graph of a run (SPEC §4.1): its shape and its rules, written once.

``{nodes: [{id, type?, name?, failStrategy?}], edges: [{source, target}]}``.
:class:`GraphSerializer` is the one validator: the recording API nests it
(so the OpenAPI schema describes the canvas) and :func:`canvas_validate`
applies it for every other writer (``loaddemo``, tests). Node ids are unique
non-empty strings, ``failStrategy`` is ``abort`` (the default, filled in) or
``skip``, edges join nodes of the graph, and a canvas holds at most
``MAX_GRAPH_NODES`` nodes and ``MAX_GRAPH_EDGES`` edges, so laying it out
and classifying its hops stays fast. Unknown keys are refused, like
everywhere else.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from project.serializers import StrictCharField, StrictSerializer, choice_field, validation_error_invalid

FAIL_STRATEGIES = ("abort", "skip")
#: The longest node id (characters); ids appear in URLs and visit rows.
NODE_ID_MAX_CHARS = 200


class NodeSerializer(StrictSerializer):
    """One canvas node ``{id, type?, name?, failStrategy?}``."""

    id = StrictCharField(max_length=NODE_ID_MAX_CHARS, trim_whitespace=False, help_text="Unique in the graph.")
    type = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=100,
        help_text="The node's kind (agent, llm, http …).",
    )
    name = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=200)
    failStrategy = choice_field(
        FAIL_STRATEGIES,
        required=False,
        allow_null=True,
        default="abort",
        help_text="abort (default): a FAILED node stops the run; skip: the run goes on.",
    )

    def validate_id(self, value):
        if not value.strip():
            raise serializers.ValidationError(gettext_lazy("must be a non-empty string."))
        return value

    def validate_failStrategy(self, value):
        return value or "abort"


class EdgeSerializer(StrictSerializer):
    """One canvas edge ``{source, target}``: ids of nodes of the graph."""

    source = StrictCharField(max_length=NODE_ID_MAX_CHARS, trim_whitespace=False)
    target = StrictCharField(max_length=NODE_ID_MAX_CHARS, trim_whitespace=False)


class GraphSerializer(StrictSerializer):
    """The canvas ``{nodes, edges}`` (SPEC §4.1)."""

    nodes = NodeSerializer(many=True, allow_empty=False)
    edges = EdgeSerializer(many=True, required=False, default=list)

    def validate_nodes(self, nodes):
        limit = settings.HERMES_CONTEXT_QUERY["MAX_GRAPH_NODES"]
        if len(nodes) > limit:
            raise serializers.ValidationError(
                _("A canvas may have at most %(limit)d nodes (MAX_GRAPH_NODES); this one has %(count)d.")
                % {"limit": limit, "count": len(nodes)}
            )
        return nodes

    def validate_edges(self, edges):
        limit = settings.HERMES_CONTEXT_QUERY["MAX_GRAPH_EDGES"]
        if len(edges) > limit:
            raise serializers.ValidationError(
                _("A canvas may have at most %(limit)d edges (MAX_GRAPH_EDGES); this one has %(count)d.")
                % {"limit": limit, "count": len(edges)}
            )
        return edges

    def validate(self, attrs):
        seen: set[str] = set()
        errors: dict = {}
        for i, node in enumerate(attrs["nodes"]):
            if node["id"] in seen:
                errors[f"nodes[{i}].id"] = [
                    _("'%(id)s' is used by another node; node ids must be unique.") % {"id": node["id"]}
                ]
                break
            seen.add(node["id"])
        if not errors:
            for i, edge in enumerate(attrs.get("edges") or []):
                for end in ("source", "target"):
                    if edge[end] not in seen:
                        errors[f"edges[{i}].{end}"] = [
                            _("'%(id)s' is not the id of a node of the graph.") % {"id": edge[end]}
                        ]
                        break
                if errors:
                    break
        if errors:
            raise serializers.ValidationError(errors)
        nodes = [{key: value for key, value in node.items() if value is not None} for node in attrs["nodes"]]
        return {"nodes": nodes, "edges": [dict(edge) for edge in attrs.get("edges") or []]}


def canvas_validate(graph) -> dict:
    """``graph`` checked by :class:`GraphSerializer` and normalised (``failStrategy``
    filled in, nulls dropped). Raises ``Invalid`` (422) naming the field, e.g.
    ``graph.nodes[1].id``."""
    serializer = GraphSerializer(data=graph)
    if not serializer.is_valid():
        raise validation_error_invalid(serializer.errors, prefix="graph")
    return serializer.validated_data


def canvas_node(graph: dict | None, node_id: str) -> dict | None:
    """The canvas node ``node_id`` of ``graph``, or None."""
    for node in (graph or {}).get("nodes", []):
        if isinstance(node, dict) and node.get("id") == node_id:
            return node
    return None


__all__ = ["FAIL_STRATEGIES", "EdgeSerializer", "GraphSerializer", "NodeSerializer", "canvas_node", "canvas_validate"]
