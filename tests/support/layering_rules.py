"""The layers of docs/architecture.md as data, and every import of a source tree checked against them."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

LAYERS_MARK = "<!-- layers:"
NEVERS_MARK = "<!-- nevers:"
ROOT = "scoregate"
LAZY_IMPORT = re.compile(r"^scoregate(\.[a-z_][a-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_]*)?$")


@dataclass(frozen=True)
class Layer:
    """One row of the layers table: a package, its layer number and what it may import directly."""

    package: str
    number: int
    may_import: tuple[str, ...]  # ("lower",) or package names; () for none


@dataclass(frozen=True)
class Never:
    """One row of the nevers table."""

    importer: str
    imported: str
    transitive: bool
    why: str


@dataclass(frozen=True)
class Arrow:
    """One import: the module that imports, the module imported, and where."""

    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.imported}"


def _table_after(text: str, mark: str) -> list[list[str]]:
    """The rows (cells, backticks removed) of the first markdown table after `mark`."""
    start = text.index(mark)
    rows: list[list[str]] = []
    for line in text[start:].splitlines()[1:]:
        stripped = line.strip()
        if not stripped:
            if rows:
                break
            continue
        if not stripped.startswith("|"):
            break
        cells = [cell.strip().replace("`", "") for cell in stripped.strip("|").split("|")]
        if set("".join(cells)) <= {"-", " ", ":"}:
            continue
        rows.append(cells)
    return rows[1:]  # the header row


def read_rules(architecture: Path) -> tuple[dict[str, Layer], list[Never]]:
    """The layers and the nevers that docs/architecture.md declares."""
    text = architecture.read_text(encoding="utf-8")
    layers: dict[str, Layer] = {}
    for number, package, _job, may in _table_after(text, LAYERS_MARK):
        allowed = () if may.strip() == "-" else tuple(part.strip() for part in may.split(","))
        layers[package] = Layer(package, int(number), allowed)
    nevers = [
        Never(importer, imported, reach.strip() == "at any distance", why)
        for importer, imported, reach, why in _table_after(text, NEVERS_MARK)
    ]
    if not layers or not nevers:
        raise ValueError(f"{architecture}: no layers or no nevers table after the marks")
    return layers, nevers


def module_name(source_root: Path, path: Path) -> str:
    """`scoregate.store.lock` for src/scoregate/store/lock.py; a package is its __init__."""
    parts = list(path.relative_to(source_root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(source_root: Path, path: Path, known: set[str]) -> Iterator[Arrow]:
    """Every module a file imports: top level, in functions, under TYPE_CHECKING, relative, or named in a string
    for a lazy import (`"scoregate.x.y"`, `"scoregate.x.y:Name"`)."""
    module = module_name(source_root, path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Arrow(module, alias.name, node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and LAZY_IMPORT.match(node.value):
            named = node.value.split(":")[0]
            if named in known:
                yield Arrow(module, named, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve_relative(module, is_package, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                # `from scoregate.store import lock` imports the module scoregate.store.lock
                yield Arrow(module, submodule if submodule in known else target, node.lineno)


def source_modules(source_root: Path) -> dict[str, Path]:
    """Every module of the package under `source_root` by its dotted name."""
    return {module_name(source_root, path): path for path in sorted((source_root / ROOT).rglob("*.py"))}


def own_arrows(source_root: Path) -> list[Arrow]:
    """Every import of one of the package's own modules, by one of its modules."""
    modules = source_modules(source_root)
    known = set(modules)
    arrows: dict[Arrow, None] = {}
    for path in modules.values():
        for arrow in imports_of(source_root, path, known):
            if arrow.imported == ROOT or arrow.imported.startswith(ROOT + "."):
                arrows[arrow] = None
    return list(arrows)


def package_of(module: str) -> str:
    """The layers-table package a module belongs to: the folder it is in (a track's CLI sub-app is its track's)."""
    parts = module.split(".")
    if len(parts) == 1:
        return ROOT
    return parts[1]


def _under(module: str, prefix: str) -> bool:
    full = f"{ROOT}.{prefix}"
    return module == full or module.startswith(full + ".")


def up_arrows(arrows: Iterable[Arrow], layers: dict[str, Layer]) -> list[str]:
    """Each import the layers table does not allow, said as a line."""
    problems = []
    for arrow in arrows:
        source, target = package_of(arrow.importer), package_of(arrow.imported)
        if source == target or target == ROOT:
            continue
        if source == ROOT:
            problems.append(f"{arrow}: the root package imports only its own errors")
            continue
        if source not in layers or target not in layers:
            unknown = source if source not in layers else target
            problems.append(f"{arrow}: package {unknown!r} is in no row of the layers table")
            continue
        allowed = _allows(layers[source], layers[target], arrow)
        if not allowed:
            problems.append(
                f"{arrow}: {source} (layer {layers[source].number}) may not import {target} "
                f"(layer {layers[target].number})"
            )
    return problems


def _allows(source: Layer, target: Layer, arrow: Arrow) -> bool:
    if source.may_import == ("lower",):
        return target.number < source.number
    # an entry is a package (`store`) or one module of it (`store.vocabulary`: that module and no other)
    return target.package in source.may_import or any(
        "." in entry and _under(arrow.imported, entry) for entry in source.may_import
    )


def reachable(arrows: Iterable[Arrow]) -> dict[str, set[str]]:
    """For each module, every module it loads at any distance (importing a module runs its packages' __init__)."""
    direct: dict[str, set[str]] = {}
    for arrow in arrows:
        targets = direct.setdefault(arrow.importer, set())
        parts = arrow.imported.split(".")
        targets.update(".".join(parts[:end]) for end in range(2, len(parts) + 1))
    closure: dict[str, set[str]] = {}
    for start in direct:
        seen: set[str] = set()
        frontier = [start]
        while frontier:
            for target in direct.get(frontier.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    frontier.append(target)
        closure[start] = seen
    return closure


def broken_nevers(arrows: list[Arrow], nevers: Iterable[Never]) -> list[str]:
    """Each never the imports break, with the arrow or the importing module."""
    closure = reachable(arrows)
    problems = []
    for never in nevers:
        if never.transitive:
            for module, targets in sorted(closure.items()):
                if _under(module, never.importer):
                    hits = sorted(t for t in targets if _under(t, never.imported))
                    if hits:
                        problems.append(f"{module} reaches {hits[0]}: {never.why}")
        else:
            for arrow in arrows:
                if _under(arrow.importer, never.importer) and _under(arrow.imported, never.imported):
                    problems.append(f"{arrow}: {never.why}")
    return problems


def package_cycles(arrows: Iterable[Arrow]) -> list[str]:
    """Each pair of packages that import each other at any distance."""
    edges: dict[str, set[str]] = {}
    for arrow in arrows:
        source, target = package_of(arrow.importer), package_of(arrow.imported)
        if source != target and ROOT not in (source, target):
            edges.setdefault(source, set()).add(target)
    reach: dict[str, set[str]] = {}
    for start in edges:
        seen: set[str] = set()
        frontier = [start]
        while frontier:
            for target in edges.get(frontier.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    frontier.append(target)
        reach[start] = seen
    return sorted(f"{a} <-> {b}" for a in reach for b in reach[a] if a < b and a in reach.get(b, set()))


def root_modules(source_root: Path) -> list[str]:
    """The modules directly in the root package."""
    return sorted(path.name for path in (source_root / ROOT).glob("*.py"))


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of a graph with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(components)


def module_cycles(arrows: Iterable[Arrow]) -> list[str]:
    """Each set of modules that import one another in a circle (any import: top level, in a function, under
    TYPE_CHECKING, or named in a string), said as a line with the arrows that close it."""
    edges: dict[str, set[str]] = {}
    lines: dict[tuple[str, str], int] = {}
    for arrow in arrows:
        if arrow.importer != arrow.imported:
            edges.setdefault(arrow.importer, set()).add(arrow.imported)
            lines.setdefault((arrow.importer, arrow.imported), arrow.line)
    problems = []
    for component in strongly_connected(edges):
        members = set(component)
        inside = sorted(
            f"{source}:{lines[source, target]} -> {target}"
            for source in component
            for target in edges.get(source, ())
            if target in members
        )
        problems.append(f"{len(component)} modules in a circle: " + "; ".join(inside))
    return problems


def imported_modules(path: Path) -> list[str]:
    """Every module a file imports, at the top or inside a function."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names
