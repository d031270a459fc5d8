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
def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module name -> the product modules it imports (resolved to modules, not names inside them)."""
    files = {
        ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): path
        for package in packages
        for path in (root / package).rglob("*.py")
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
                if name and name != module and name.split(".")[0] in packages:
                    found.add(name)
        graph[module] = found
    return graph


def _within(module: str, package: str) -> bool:
    """Whether `module` is `package` or one of its submodules: `a.lexical_pg` is not within `a.lexical`."""
    return not package or module == package or module.startswith(package + ".")


def _violations(importer_prefix: str, imported_prefix: str, *, except_in: str | None = None) -> list[str]:
    return sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        if _within(module, importer_prefix) and not (except_in and _within(module, except_in))
        for target in targets
        if _within(target, imported_prefix)
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


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Loops in the import graph, each from its first module back to it. A package importing its own
    submodules (its __init__ re-exporting them) is not a loop; modules that merely share a name's start
    (`lexical` and `lexical_pg`) are two modules, so a loop between them is one."""
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
    return [c for c in cycles if not all(_within(c[0], m) or _within(m, c[0]) for m in c)]


def test_no_import_cycles() -> None:
    assert import_cycles(import_graph()) == []


def _plant(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, source in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(source, encoding="utf-8")
    return import_graph(root, ("pkg",))


def test_a_loop_between_modules_sharing_a_prefix_is_found(tmp_path: Path) -> None:
    graph = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/x.py": "def backend():\n    from pkg import x_y\n    return x_y\n",
            "pkg/x_y.py": "from pkg.x import backend\n",
        },
    )
    assert import_cycles(graph) == [["pkg.x", "pkg.x_y", "pkg.x"]]


def test_a_package_reexporting_its_submodules_is_no_loop(tmp_path: Path) -> None:
    graph = _plant(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.x import f\n",
            "pkg/x.py": "from pkg import y\nf = y.g\n",
            "pkg/y.py": "",
        },
    )
    assert "pkg" in graph["pkg.x"] and "pkg.x" in graph["pkg"]  # the package and its own part
    assert import_cycles(graph) == []


def test_the_checker_sees_lazy_and_relative_imports() -> None:
    """The rules above are only as good as the graph: a lazy import inside a function must be in it."""
    graph = import_graph()
    assert (
        "connectors.knowledge.minilm" in graph["connectors.knowledge.embedder"]
    )  # imported inside a function
    assert "connectors.knowledge.store" in graph["connectors.sync"]
