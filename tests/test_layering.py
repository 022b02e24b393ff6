"""The layers import only the layers below them (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import svc

ROOT = Path(svc.__file__).parent
# Bottom first; a layer may import itself, any layer before it, and the shared leaf modules.
LAYERS = ["graph", "media", "store", "webhook", "flows", "http", "cli"]
SHARED = {"crypto", "_version"}


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
    allowed = set(LAYERS[: LAYERS.index(layer) + 1]) | SHARED
    offenders = {
        str(path.relative_to(ROOT.parent)): sorted(_svc_imports(path) - allowed)
        for path in (ROOT / layer).rglob("*.py")
    }
    assert {path: bad for path, bad in offenders.items() if bad} == {}


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
            if any(m.split(".")[0] in {"cryptography", "hashlib", "hmac"} for m in modules):
                offenders.append(str(path.relative_to(ROOT.parent)))
    assert offenders == []
