"""What importing a public module pulls in, checked in a fresh interpreter (the test process has
imported everything already).

The kernels and the error types are imported by users' code without Hypothesis; the recorder runs
inside users' applications without Hypothesis or click; the corpus knows nothing of Hypothesis or
the fuzzer (DESIGN.md: data flows one way).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, cli_env


@pytest.mark.parametrize("modules, forbidden", [
    (["strategies.errors", "strategies.registry", "strategies.json_values", "strategies.json_schemas"],
     ["hypothesis"]),
    (["strategies.json_values", "strategies.json_schemas"], ["hypothesis", "jsonschema"]),
    (["fuzzer.records.recorder"], ["hypothesis", "click"]),
    (["corpus.store", "corpus.minimize"], ["hypothesis", "fuzzer"]),
], ids=lambda v: ",".join(v))
def test_importing_a_module_pulls_in_none_of_what_it_must_not(modules, forbidden):
    code = (f"import sys, {', '.join(modules)}\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {forbidden!r}))\n")
    out = subprocess.run([sys.executable, "-c", code], env=cli_env(), cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"


# -- the graph of imports: no loops, and isolation knows no harness ---------------------------------

PACKAGES = ("fuzzer", "strategies", "corpus")


def _modules() -> dict:
    """Dotted name -> file, for every module of the three packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _imports(name: str, path, modules: dict) -> set:
    """The modules of the three packages ``name`` imports anywhere in its file (at the top or inside
    a function: a loop through a lazy import is a loop all the same, only hidden until it runs).
    ``from package import submodule`` is an import of the submodule, not of the package."""
    import ast

    def resolve(dotted: str):
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        out |= {m for m in map(resolve, targets) if m and m != name}
    return out


def _loops(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    loops: list = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return loops


def test_no_two_modules_import_each_other_in_a_loop():
    """corpus_cmds -> replay_cmd -> records_cmds -> corpus_cmds was one: a loop makes the order
    modules load in matter, and hides which one a concept lives in."""
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _loops(graph) == []


def test_the_isolation_layer_imports_no_harness():
    modules = _modules()
    isolation = {name: _imports(name, path, modules) for name, path in modules.items()
                 if name.startswith("fuzzer.isolation")}
    assert isolation and all(not target.startswith("fuzzer.harnesses") for targets in isolation.values()
                             for target in targets), isolation
