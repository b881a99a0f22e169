"""Schema complexity of one item: field counts, depth, arrays, enums, and a simple/medium/complex bin."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

ComplexityBin = Literal["simple", "medium", "complex"]
_MAX_REF_HOPS = 32


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One leaf property of a schema (objects with properties are walked into, arrays are leaves)."""

    path: str
    depth: int
    required: bool
    types: tuple[str, ...]
    has_enum: bool
    has_format: bool


@dataclass(frozen=True, slots=True)
class SchemaComplexity:
    """Complexity features of a schema; depth counts nesting, so a flat object has max_depth 0."""

    total_fields: int
    required_fields: int
    optional_fields: int
    max_depth: int
    array_fields: int
    nested_objects: int
    enum_fields: int
    format_fields: int
    type_diversity: int
    bin: ComplexityBin

    @property
    def has_arrays(self) -> bool:
        """True when some field is an array."""
        return self.array_fields > 0

    @property
    def has_nested_objects(self) -> bool:
        """True when some property is itself an object with properties."""
        return self.nested_objects > 0

    def to_dict(self) -> dict[str, Any]:
        """Return the features as a plain dict."""
        return asdict(self)


def complexity_bin(total_fields: int, max_depth: int) -> ComplexityBin:
    """Bin a schema: simple (< 5 fields, depth ≤ 1), complex (> 15 fields or depth > 2), else medium."""
    if total_fields > 15 or max_depth > 2:
        return "complex"
    if total_fields < 5 and max_depth <= 1:
        return "simple"
    return "medium"


def _pointer(root: Mapping[str, Any], pointer: str) -> Any:
    """Return the part of `root` a JSON Pointer (`/$defs/addr`) names, or None."""
    target: Any = root
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        target = target.get(part) if isinstance(target, Mapping) else None
    return target


def _resolve(node: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow local `$ref`s (`#/...`) and pick the object branch of anyOf/oneOf/allOf when there is one."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(node, Mapping):
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            node = _pointer(root, ref[1:])
            continue
        if "properties" not in node:
            for key in ("allOf", "anyOf", "oneOf"):
                branches = node.get(key)
                if isinstance(branches, list):
                    with_props = [b for b in branches if isinstance(_resolve(b, root).get("properties"), Mapping)]
                    if with_props:
                        return _resolve(with_props[0], root)
        return node
    return {}


def _types(node: Mapping[str, Any]) -> tuple[str, ...]:
    declared = node.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        return tuple(t for t in declared if isinstance(t, str))
    if isinstance(node.get("properties"), Mapping):
        return ("object",)
    return ()


def _walk(node: Mapping[str, Any], root: Mapping[str, Any], prefix: str, depth: int) -> Iterator[SchemaField]:
    properties = node.get("properties")
    if not isinstance(properties, Mapping):
        return
    required = set(node.get("required") or ())
    for name, raw in properties.items():
        child = _resolve(raw, root)
        path = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(child.get("properties"), Mapping) and depth < _MAX_REF_HOPS:
            yield from _walk(child, root, path, depth + 1)
            continue
        yield SchemaField(
            path=path,
            depth=depth,
            required=name in required,
            types=_types(child),
            has_enum="enum" in child or "const" in child,
            has_format="format" in child or "pattern" in child,
        )


def schema_fields(schema: Mapping[str, Any]) -> list[SchemaField]:
    """Return the leaf fields of an object schema, in declaration order."""
    return list(_walk(_resolve(schema, schema), schema, "", 0))


def _nested_objects(node: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> int:
    properties = node.get("properties")
    if not isinstance(properties, Mapping) or depth >= _MAX_REF_HOPS:
        return 0
    count = 0
    for raw in properties.values():
        child = _resolve(raw, root)
        if isinstance(child.get("properties"), Mapping):
            count += 1 + _nested_objects(child, root, depth + 1)
    return count


def schema_complexity(schema: Mapping[str, Any]) -> SchemaComplexity:
    """Measure a JSON Schema's complexity features and bin it."""
    fields = schema_fields(schema)
    total = len(fields)
    required = sum(f.required for f in fields)
    max_depth = max((f.depth for f in fields), default=0)
    return SchemaComplexity(
        total_fields=total,
        required_fields=required,
        optional_fields=total - required,
        max_depth=max_depth,
        array_fields=sum("array" in f.types for f in fields),
        nested_objects=_nested_objects(_resolve(schema, schema), schema),
        enum_fields=sum(f.has_enum for f in fields),
        format_fields=sum(f.has_format for f in fields),
        type_diversity=len({t for f in fields for t in f.types if t != "null"}),
        bin=complexity_bin(total, max_depth),
    )
