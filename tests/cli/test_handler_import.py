"""``--outbox-handler`` / ``--flow-handler`` imports with the installed ``svc`` console script.

The script's own folder (the virtualenv's ``bin``) is first on its ``sys.path``,
not the working folder: the handler module beside the config must still be
found (issue 22, item 5), and a module that fails on import must say why
(issue 26, item 4).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests._support import child_env, run_svc

pytestmark = pytest.mark.slow

SCRIPT = Path(sys.executable).parent / "svc"

HANDLERS = {
    "goodhandler.py": "def not_async(item):\n    return None\n",
    "brokenhandler.py": "import json\nraise ValueError('handler settings missing: SHOP_URL')\n",
    "typohandler.py": "import nonexistent_dependency_xyz\n",
}


def _svc(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=folder,
        env=child_env(None),
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    for name, text in HANDLERS.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        # Imported from the working folder: the refusal is about the callable itself.
        (
            "goodhandler:not_async",
            "the --outbox-handler target must be an async function of one item.",
        ),
        ("goodhandler:missing", "the --outbox-handler module has no such callable."),
        ("nomodule_xyz:deliver", "the --outbox-handler module cannot be imported."),
        (
            "brokenhandler:deliver",
            "the --outbox-handler module failed on import "
            "(ValueError: handler settings missing: SHOP_URL).",
        ),
        (
            "typohandler:deliver",
            "the --outbox-handler module failed on import "
            "(ModuleNotFoundError: No module named 'nonexistent_dependency_xyz').",
        ),
    ],
)
def test_the_console_script_imports_handlers_from_the_working_folder(
    folder: Path, handler: str, message: str
) -> None:
    assert SCRIPT.is_file()
    config = str(folder / "bot" / "svc.config.yaml")
    result = _svc(
        folder,
        *("serve", "--config", config, "--dry-run", "--port", "0"),
        *("--database", "svc.db", "--outbox-handler", handler),
    )
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "svc: serving" not in result.stderr

