"""The layout's rules, checked on the import graph (every import, lazy ones inside functions included).

Data flows one way: sources -> sync -> knowledge store -> flow -> Slack surface. So connectors, graph_flows and
the benchmark never import bot; only the store reads its own tables; a source never reaches into the store; and
no two product modules import each other, directly or around a loop.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "connectors", "graph_flows", "evals")


@cache
def import_graph() -> dict[str, set[str]]:
    """Module name -> the product modules it imports (resolved to modules, not names inside them)."""
    files = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        found: set[str] = set()
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = module.split(".")[: len(module.split(".")) - node.level + int(is_package)]
                    base = ".".join([*parent, base] if base else parent)
                names = [f"{base}.{a.name}" for a in node.names] + [base]
            for name in names:
                # `from a.b import c`: c is a module when a.b.c is one, else a name inside a.b
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module and name.split(".")[0] in PACKAGES:
                    found.add(name)
        graph[module] = found
    return graph


def _violations(importer_prefix: str, imported_prefix: str, *, except_in: str | None = None) -> list[str]:
    return sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        if module.startswith(importer_prefix) and not (except_in and module.startswith(except_in))
        for target in targets
        if target == imported_prefix or target.startswith(imported_prefix + ".")
    )


@pytest.mark.parametrize("layer", ["connectors", "graph_flows", "evals"])
def test_lower_layers_never_import_the_slack_surface(layer: str) -> None:
    assert _violations(layer, "bot") == []


def test_only_the_store_reads_its_tables() -> None:
    assert _violations("", "connectors.knowledge.tables", except_in="connectors.knowledge") == []


def test_sources_do_not_reach_into_the_store() -> None:
    assert _violations("connectors.sources", "connectors.knowledge") == []


def test_the_flow_does_not_call_sources() -> None:
    assert _violations("graph_flows", "connectors.sources") == []
    assert _violations("graph_flows", "connectors.sync") == []


def test_no_import_cycles() -> None:
    graph = import_graph()
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # a package importing its own submodules (its __init__ re-exporting them) is not a loop
    real = [c for c in cycles if not all(c[0].startswith(m) or m.startswith(c[0]) for m in c)]
    assert real == []


def test_the_checker_sees_lazy_and_relative_imports() -> None:
    """The rules above are only as good as the graph: a lazy import inside a function must be in it."""
    graph = import_graph()
    assert (
        "connectors.knowledge.minilm" in graph["connectors.knowledge.embedder"]
    )  # imported inside a function
    assert "connectors.knowledge.store" in graph["connectors.sync"]
