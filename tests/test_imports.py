"""The import structure of the package: no module reaches into another's private names, and no import cycles.

The contracts in pyproject.toml (``[tool.importlinter]``: each layer imports only the layers below it, no cycles,
private modules stay in their package; ARCHITECTURE.md) are checked by running ``lint-imports``.

The first two checks read the source with :mod:`ast` (nothing is imported), so they see every import, including those
inside functions: a function-level import is still a dependency. Only imports under ``if TYPE_CHECKING:`` are
left out of the cycle check, since they never run.
"""

from __future__ import annotations

import ast
import graphlib
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "hieranon"


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool
    where: str  # the path reported, relative to the source root


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line``; ``typing_only`` when under ``if TYPE_CHECKING:``."""

    source: str
    target: str
    line: int
    typing_only: bool


def _modules(src: Path = SRC) -> dict[str, Module]:
    modules = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = Module(".".join(parts), path, is_package, path.relative_to(src).as_posix())
    return modules


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Imports(ast.NodeVisitor):
    """Collects one module's imports of package modules, and its uses of other modules' private names."""

    def __init__(self, module: Module, modules: dict[str, Module]) -> None:
        self.module = module
        self.modules = modules
        self.edges: list[Edge] = []
        self.private: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> package module it is bound to
        self._typing_only = 0

    def _absolute(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = self.module.name.split(".")
        if not self.module.is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _edge(self, target: str, line: int) -> None:
        self.edges.append(Edge(self.module.name, target, line, self._typing_only > 0))

    def _private_use(self, target: str, name: str, line: int) -> None:
        """``name`` of module ``target`` is used here (``name`` empty: the module itself is imported)."""
        if not name:  # a private module is private to its own package
            owner, _, last = target.rpartition(".")
            if _is_private(last) and not (self.module.name == owner or self.module.name.startswith(owner + ".")):
                self.private.append(f"{self.module.where}:{line}: uses private module {target}")
        elif _is_private(name) and target != self.module.name:
            self.private.append(f"{self.module.where}:{line}: uses {target}.{name}, a private name of another module")

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._typing_only += 1
            for child in node.body:
                self.visit(child)
            self._typing_only -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != PACKAGE:
                continue
            self._edge(alias.name, node.lineno)
            self._private_use(alias.name, "", node.lineno)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                self.aliases[PACKAGE] = PACKAGE

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        target = self._absolute(node)
        if target.split(".")[0] != PACKAGE:
            return
        imports_names = False
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            if submodule in self.modules:
                self._edge(submodule, node.lineno)
                self._private_use(submodule, "", node.lineno)
                self.aliases[alias.asname or alias.name] = submodule
            else:
                imports_names = True
                self._private_use(target, alias.name, node.lineno)
        if imports_names:
            self._edge(target, node.lineno)
            self._private_use(target, "", node.lineno)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node.value)
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            if head in self.aliases:
                target = ".".join(filter(None, [self.aliases[head], rest]))
                if target in self.modules and f"{target}.{node.attr}" not in self.modules:
                    self._private_use(target, node.attr, node.lineno)
        self.generic_visit(node)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _scan(src: Path = SRC) -> tuple[list[Edge], list[str]]:
    modules = _modules(src)
    edges, private = [], []
    for module in modules.values():
        visitor = _Imports(module, modules)
        visitor.visit(ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path)))
        edges += [e for e in visitor.edges if e.target in modules and e.target != e.source]
        private += visitor.private
    return edges, private


def _cycles(edges: list[Edge], modules: dict[str, Module]) -> list[str]:
    """Every cycle the graph has, found one at a time (a found cycle loses one edge and the search goes on)."""
    graph: dict[str, set[str]] = {}
    lines: dict[tuple[str, str], int] = {}
    for edge in edges:
        if not edge.typing_only:
            graph.setdefault(edge.source, set()).add(edge.target)
            lines.setdefault((edge.source, edge.target), edge.line)
    found = []
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
            return found
        except graphlib.CycleError as error:
            cycle = error.args[1]  # [a, ..., a]; each node depends on the one after it in TopologicalSorter terms
        # graphlib's cycle lists a node after one of its dependencies, so read it backwards as imports
        steps = list(reversed(cycle))
        found.append(" -> ".join(
            f"{modules[a].where}:{lines[(a, b)]} imports {b}" for a, b in zip(steps, steps[1:])))
        graph[steps[0]].discard(steps[1])


def test_scan_finds_private_uses_and_cycles(tmp_path: Path) -> None:
    """The checks themselves: a planted private import, attribute use and cycle are all reported."""
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "low.py").write_text("import hieranon.high\n_mine = 1\n")
    (package / "high.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import low\nfrom .low import _mine, __doc__\n"
        "if TYPE_CHECKING:\n    from .sub import typed\n"
        "def f():\n    return low._mine\n")
    (package / "sub" / "typed.py").write_text("from .. import high\n")
    (package / "sub" / "_hidden.py").write_text("")
    (package / "sub" / "user.py").write_text("from ._hidden import x\n")
    (package / "outside.py").write_text("from .sub._hidden import x\n")
    edges, private = _scan(tmp_path)
    assert sorted(private) == [
        "hieranon/high.py:3: uses hieranon.low._mine, a private name of another module",
        "hieranon/high.py:7: uses hieranon.low._mine, a private name of another module",
        "hieranon/outside.py:1: uses private module hieranon.sub._hidden",
    ]
    cycles = _cycles(edges, _modules(tmp_path))
    assert len(cycles) == 1  # high -> sub.typed -> high runs only under TYPE_CHECKING: not a cycle
    assert "hieranon/low.py:1 imports hieranon.high" in cycles[0]
    assert "hieranon/high.py:2 imports hieranon.low" in cycles[0]


def test_no_module_uses_another_modules_private_names() -> None:
    _, private = _scan()
    assert not private, "private names used across modules (make the helper public where it belongs):\n" + \
        "\n".join(private)


def test_no_import_cycles() -> None:
    edges, _ = _scan()
    cycles = _cycles(edges, _modules())
    assert not cycles, "import cycles (function-level imports count too):\n" + "\n".join(cycles)


def test_import_linter_contracts_are_kept() -> None:
    """``lint-imports`` on this checkout's sources, with the contracts of pyproject.toml."""
    exe = Path(sys.executable).with_name("lint-imports")
    exe = str(exe) if exe.exists() else shutil.which("lint-imports")
    assert exe, "lint-imports not found: install the test extra (pip install -e '.[test]')"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([exe, "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_module_belongs_to_a_layer() -> None:
    """The layers contract constrains only the packages it lists: a module added at the top of the package, outside
    every layer, would escape it. Only the public entry points and the benchmarks' helpers live there."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layered = [c for c in config["contracts"] if c["type"] == "layers"]
    assert len(layered) == 1, "one layers contract over the package"
    layers = {name.strip("()") for name in layered[0]["layers"]}
    top = {name.split(".")[1] for name in _modules() if name.count(".") >= 1}
    assert top - layers == {"__main__"}, sorted(top - layers)


def test_builders_and_datasets_are_reachable_from_the_top_level_as_before_the_layers():
    """``from hieranon import builders`` and ``hieranon.datasets`` (what the README used) still work, in a
    fresh interpreter where nothing else imported the modules first."""
    code = ("import hieranon\n"
            "from hieranon import builders, datasets\n"
            "import hieranon.hierarchies.builders as b, hieranon.io.datasets as d\n"
            "assert builders is b and datasets is d and hieranon.datasets.load_adult is d.load_adult\n"
            "assert {'builders', 'datasets'} <= set(hieranon.__all__)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def test_no_module_over_700_lines_but_kernel_modules():
    """A module holds one thing: none is over 700 lines, except a module of
    compiled kernels (its loops are long by nature and split badly)."""
    package = SRC / PACKAGE
    long = {str(p.relative_to(package)): n for p in package.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 700 and "@kernel" not in p.read_text()}
    assert not long, long


def test_hieranon_risk_names_every_risk_model():
    """``hieranon.risk`` re-exports the risk models from where they live, the same objects."""
    import hieranon
    from hieranon.evaluation import risk, suda
    from hieranon.privacy import population, risk_models, weighted

    homes = [risk, suda, population, risk_models, weighted]
    for name in hieranon.risk.__all__:
        assert any(getattr(home, name, None) is getattr(hieranon.risk, name) for home in homes), name
    assert {"pitman", "zayatz", "snb", "dankar", "individual_risk", "special_uniques", "AverageRisk"} <= \
        set(hieranon.risk.__all__)
