"""svc.webhook declares its public surface, and stays below the HTTP and CLI layers."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import svc.webhook

PACKAGE = Path(svc.webhook.__file__).parent


def test_all_is_complete_and_sorted_uniquely() -> None:
    exported = {
        name
        for name, value in vars(svc.webhook).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(svc.webhook.__all__) == exported
    assert len(svc.webhook.__all__) == len(set(svc.webhook.__all__))
    for name in svc.webhook.__all__:
        assert getattr(svc.webhook, name) is not None


def test_every_private_module_public_name_is_reexported() -> None:
    for path in PACKAGE.glob("_*.py"):
        if path.name == "__init__.py":
            continue
        module = __import__(f"svc.webhook.{path.stem}", fromlist=["__all__"])
        missing = set(getattr(module, "__all__", ())) - set(svc.webhook.__all__)
        assert not missing, (path.name, missing)


def test_layering_and_no_environment_reads() -> None:
    for path in PACKAGE.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("svc.http", "svc.cli")), path.name
                assert node.module not in ("hashlib", "hmac", "cryptography"), path.name
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name not in ("os", "hashlib", "hmac"), path.name
        assert "os.environ" not in source and "getenv" not in source, path.name
