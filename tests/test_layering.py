"""The layers import only the layers below them (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import svc

ROOT = Path(svc.__file__).parent
# Bottom first; a layer may import itself, any layer before it, and the shared leaf modules.
LAYERS = ["graph", "media", "store", "webhook", "flows", "http", "cli"]
SHARED = {"crypto", "_text", "_version"}


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


# Character classes that spell a control-character rule (STYLE.md habit 12: svc/_text.py
# defines each once). Known copies in files other engineers are splitting right now; the
# merge swaps them for the svc._text predicate named beside each and empties this list.
_CONTROL_RULE_COPIES = {
    "svc/http/_service.py",  # _CONTROL -> has_control; the 0x20..0x7E loop -> is_printable_ascii
    "svc/http/_app.py",  # the ord() loop -> has_ascii_control
    "svc/http/_profile.py",  # _VISIBLE_ASCII -> is_visible_ascii
    "svc/store/_validate.py",  # CONTROL_CHARS, kept only while _sqlite.py searches it
}
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
