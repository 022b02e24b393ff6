"""The layers import only the layers below them (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import svc

ROOT = Path(svc.__file__).parent
# Bottom first; a layer may import itself, any tier before its own, and the shared leaf
# modules. The layers of one tier are siblings: neither imports the other.
TIERS = [
    ["graph"], ["media"], ["store"], ["webhook"], ["flows"], ["runtime"], ["http"],
    ["dev", "testing"],
    ["cli"],
]
LAYERS = [layer for tier in TIERS for layer in tier]
SHARED = {"crypto", "_json", "_text", "_version"}


def _svc_imports(path: Path) -> set[str]:
    """The first component below ``svc`` of every svc import in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = path.relative_to(ROOT.parent).with_suffix("").parts[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                names = [".".join([*base, node.module] if node.module else base)]
                if not node.module:
                    names = [".".join([*base, alias.name]) for alias in node.names]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "svc" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", [layer for layer in LAYERS if (ROOT / layer).is_dir()])
def test_layer_imports_only_lower_layers(layer: str) -> None:
    tier = next(index for index, names in enumerate(TIERS) if layer in names)
    allowed = {layer, *(name for names in TIERS[:tier] for name in names)} | SHARED
    offenders = {
        str(path.relative_to(ROOT.parent)): sorted(_svc_imports(path) - allowed)
        for path in (ROOT / layer).rglob("*.py")
    }
    assert {path: bad for path, bad in offenders.items() if bad} == {}



def _svc_modules_imported(path: Path) -> set[str]:
    """The full dotted name of every svc module or package ``path`` imports (lazy ones too)."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
            else:
                found.add(node.module or "")
    return {name for name in found if name.split(".")[0] == "svc"}


def test_asgi_uses_only_public_surfaces_of_cli_and_the_layers_below() -> None:
    """``svc/asgi.py`` imports ``svc.cli`` and the layers below, never a private module."""
    offenders = sorted(
        name
        for name in _svc_modules_imported(ROOT / "asgi.py")
        if name == "svc"
        or name.split(".")[1] not in LAYERS
        or any(part.startswith("_") for part in name.split(".")[1:])
    )
    assert offenders == []

def test_crypto_primitives_are_touched_only_by_the_crypto_module() -> None:
    offenders = []
    for path in ROOT.rglob("*.py"):
        if path == ROOT / "crypto.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module or ""]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            if any(m.split(".")[0] in {"cryptography", "hashlib", "hmac", "nacl"} for m in modules):
                offenders.append(str(path.relative_to(ROOT.parent)))
    assert offenders == []


# Character classes that spell a control-character rule (STYLE.md habit 12: svc/_text.py
# defines each once). Known copies in files other engineers are splitting right now; the
# merge swaps them for the svc._text predicate named beside each and empties this list.
_CONTROL_RULE_COPIES: set[str] = set()
_CONTROL_RULE_SPELLINGS = ("\\x1f", "\\x7f", "\\x9f", "\\x7e", "0x7F", "0x7f", "0x9F", "0x9f")


def test_control_character_rules_are_defined_only_in_svc_text() -> None:
    offenders = set()
    for path in ROOT.rglob("*.py"):
        name = str(path.relative_to(ROOT.parent))
        if path == ROOT / "_text.py" or name in _CONTROL_RULE_COPIES:
            continue
        text = path.read_text()
        if any(spelling in text for spelling in _CONTROL_RULE_SPELLINGS):
            offenders.add(name)
    assert offenders == set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Every svc module and the svc modules it imports, lazy and ``TYPE_CHECKING`` ones included.

    ``from package import name`` counts as importing ``package.name`` when that
    is a module, else ``package`` itself; a parent package's ``__init__`` is not
    counted for a submodule import (Python has it loaded already by then).
    """
    modules = {_module_name(path): path for path in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*base, node.module] if node.module else base)
                else:
                    source = node.module or ""
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        found.add(f"{source}.{alias.name}")
                    elif source in modules:
                        found.add(source)
        graph[name] = found - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


# Known circles in files other engineers are changing right now; the merge removes them.
_KNOWN_CIRCLES: list[list[str]] = []


def test_no_two_svc_modules_import_each_other() -> None:
    """No import circle, however long, counting imports inside functions and type-only ones.

    ``if TYPE_CHECKING:`` imports count too: a type-only import still says one module
    needs the other, and the circles it closes are the ones a later refactor trips on.
    """
    assert _circles(_import_graph()) == _KNOWN_CIRCLES


def test_the_circle_finder_sees_a_long_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


MAX_MODULE_LINES = 700


def test_no_svc_module_is_over_700_lines() -> None:
    long = {
        str(path.relative_to(ROOT.parent)): count
        for path in ROOT.rglob("*.py")
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
