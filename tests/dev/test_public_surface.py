"""svc.dev declares its public surface; its delivery builders and rendering are sans-IO."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import svc.dev
import svc.webhook

PACKAGE = Path(svc.dev.__file__).parent


def test_all_is_complete_and_unique() -> None:
    exported = {
        name
        for name, value in vars(svc.dev).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(svc.dev.__all__) == exported
    assert len(svc.dev.__all__) == len(set(svc.dev.__all__))


def test_the_page_ships_inside_the_package() -> None:
    static = PACKAGE / "static"
    assert {p.name for p in static.iterdir()} == {"index.html", "dev.js", "dev.css"}
    page = (static / "index.html").read_text()
    assert "http://" not in page and "https://" not in page  # no CDN: everything is local


def test_deliveries_and_rendering_do_no_io() -> None:
    forbidden = {"os", "trio", "httpx", "socket", "quart", "hypercorn", "time"}
    webhook = Path(svc.webhook.__file__).parent
    for path in (webhook / "_deliveries.py", PACKAGE / "_render.py"):
        name = path.name
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            assert not {n.split(".")[0] for n in names} & forbidden, (name, names)
