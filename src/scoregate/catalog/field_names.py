"""The fields a YAML mapping may hold at a pydantic error's location, read from the file kind's JSON Schema."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_BRANCH_MODEL = re.compile(r"\[.*?(\w+)\]$")
"""The model a union branch tag names: `function-after[_choices_known(), PromptRoute]` → PromptRoute."""


def _expand(node: Any, defs: dict[str, Any], depth: int = 0) -> list[dict[str, Any]]:
    """The concrete schemas a node stands for: `$ref` resolved, `anyOf`/`oneOf`/`allOf` flattened."""
    if not isinstance(node, dict) or depth > 20:
        return []
    if isinstance(ref := node.get("$ref"), str):
        return _expand(defs.get(ref.rsplit("/", 1)[-1]), defs, depth + 1)
    members = [*node.get("anyOf", []), *node.get("oneOf", []), *node.get("allOf", [])]
    if members:
        return [concrete for member in members for concrete in _expand(member, defs, depth + 1)]
    return [node]


def _tagged(alternatives: list[dict[str, Any]], part: str) -> list[dict[str, Any]] | None:
    """The alternatives a union tag in `loc` selects (`llm_judge`, or a branch naming a model); None if no tag."""
    by_kind = [
        alt
        for alt in alternatives
        if (kind := alt.get("properties", {}).get("kind", {})).get("const") == part or part in kind.get("enum", [])
    ]
    if by_kind:
        return by_kind
    if (named := _BRANCH_MODEL.search(part)) is not None:
        return [alt for alt in alternatives if alt.get("title") == named.group(1)]
    return None


def _children(node: Any, part: Any, defs: dict[str, Any]) -> list[Any]:
    """The schemas one step of a pydantic `loc` leads to from `node`."""
    alternatives = _expand(node, defs)
    if isinstance(part, str) and (selected := _tagged(alternatives, part)) is not None:
        return list(selected)
    found: list[Any] = []
    for alt in alternatives:
        properties = alt.get("properties", {})
        if isinstance(part, str) and part in properties:
            found.append(properties[part])
        elif isinstance(part, int) and "items" in alt:
            found.append(alt["items"])
        elif isinstance(part, int) and part < len(alt.get("prefixItems", [])):
            found.append(alt["prefixItems"][part])
        elif isinstance(alt.get("additionalProperties"), dict):
            found.append(alt["additionalProperties"])
    return found


def allowed_fields(schema: dict[str, Any], loc: Sequence[Any]) -> list[str]:
    """Return the field names the mapping at `loc` may hold (sorted; [] when the schema does not say)."""
    defs = schema.get("$defs", {})
    nodes: list[Any] = [schema]
    for part in loc:
        nodes = [child for node in nodes for child in _children(node, part, defs)]
    return sorted({name for node in nodes for alt in _expand(node, defs) for name in alt.get("properties", {})})
