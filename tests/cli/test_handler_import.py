"""``--app`` / ``--outbox-handler`` / ``--flow-handler`` imports with the installed ``svc`` script.

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


def _error_line(stderr: str) -> str:
    """The one ``Error:`` line of a refusal (the dry-run secret lines come before it)."""
    [line] = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    return line


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    for name, text in HANDLERS.items():
        (tmp_path / name).write_text(text)
    return tmp_path


FACADE = "a facade (an object with handles(update) and run(context))"


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        # Imported from the working folder: the refusal is about the callable itself.
        (
            "goodhandler:not_async",
            "--outbox-handler goodhandler:not_async: "
            "the target must be an async function of one item.",
        ),
        (
            "goodhandler:missing",
            "--outbox-handler goodhandler:missing: "
            "AttributeError: module 'goodhandler' has no attribute 'missing'",
        ),
        (
            "nomodule_xyz:deliver",
            "--outbox-handler nomodule_xyz:deliver: module 'nomodule_xyz' cannot be imported: "
            "ModuleNotFoundError: No module named 'nomodule_xyz'",
        ),
        (
            "brokenhandler:deliver",
            "--outbox-handler brokenhandler:deliver: module 'brokenhandler' failed on import: "
            "ValueError: handler settings missing: SHOP_URL",
        ),
        (
            "typohandler:deliver",
            "--outbox-handler typohandler:deliver: module 'typohandler' failed on import: "
            "ModuleNotFoundError: No module named 'nonexistent_dependency_xyz'",
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
    assert _error_line(result.stderr) == f"Error: {message}"
    assert "Traceback" not in result.stderr
    assert "svc: serving" not in result.stderr


# --- --app: the user's facade ---------------------------------------------------------------

APPS = {
    "myapp.py": (
        "from svc.webhook import DefaultFacade\n"
        "facade = DefaultFacade()\n"
        "def make():\n    return DefaultFacade()\n"
        "def make_nothing():\n    return 42\n"
        "def make_badly():\n    raise RuntimeError('BOT_TOKEN is missing')\n"
        "def make_quit():\n    raise SystemExit(0)\n"
        "def needs_an_argument(settings):\n    return DefaultFacade()\n"
        "number = 7\n"
    ),
    "brokenapp.py": "raise KeyError('OPENAI_API_KEY')\n",
    "shop.py": "raise RuntimeError('SHOP_URL is not set')\n",
    "quitapp.py": "import sys\nsys.exit(0)\n",
}
SHOP = "--app shop:bot: module 'shop' failed on import: RuntimeError: SHOP_URL is not set"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("myapp", "--app myapp: must look like module:attribute."),
        (
            "myapp:missing",
            "--app myapp:missing: AttributeError: module 'myapp' has no attribute 'missing'",
        ),
        (
            "nomodule_xyz:facade",
            "--app nomodule_xyz:facade: module 'nomodule_xyz' cannot be imported: "
            "ModuleNotFoundError: No module named 'nomodule_xyz'",
        ),
        (
            "brokenapp:facade",
            "--app brokenapp:facade: module 'brokenapp' failed on import: "
            "KeyError: 'OPENAI_API_KEY'",
        ),
        ("shop:bot", SHOP),
        (
            "myapp:number",
            f"--app myapp:number: the target is neither {FACADE} nor a factory of one (type int).",
        ),
        (
            "myapp:make_nothing",
            f"--app myapp:make_nothing: the factory returned a value of type int, not {FACADE}.",
        ),
        (
            "myapp:make_badly",
            "--app myapp:make_badly: the factory failed when called: "
            "RuntimeError: BOT_TOKEN is missing",
        ),
        (
            "quitapp:bot",
            "--app quitapp:bot: module 'quitapp' failed on import: SystemExit: 0",
        ),
        ("myapp:make_quit", "--app myapp:make_quit: the factory failed when called: SystemExit: 0"),
        (
            "myapp:needs_an_argument",
            "--app myapp:needs_an_argument: the factory failed when called: TypeError: "
            "needs_an_argument() missing 1 required positional argument: 'settings'",
        ),
    ],
)
def test_app_import_errors_are_named_before_binding(
    folder: Path, target: str, message: str
) -> None:
    for name, text in APPS.items():
        (folder / name).write_text(text)
    config = str(folder / "bot" / "svc.config.yaml")
    result = _svc(folder, "serve", "--config", config, "--dry-run", "--port", "0", "--app", target)
    assert result.returncode == 1
    assert _error_line(result.stderr) == f"Error: {message}"
    assert "Traceback" not in result.stderr
    assert "svc: serving" not in result.stderr


def test_cli_md_quotes_a_refusal_as_it_is_printed() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert f"`Error: {SHOP}`" in " ".join(page.split())


def test_app_takes_a_facade_a_factory_or_a_facade_class_from_the_working_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from svc.cli._user_code import load_app
    from svc.webhook import DefaultFacade

    (folder / "myapp_inproc.py").write_text(APPS["myapp.py"])
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))  # import_attribute adds the working folder
    monkeypatch.delitem(sys.modules, "myapp_inproc", raising=False)
    facade = load_app("myapp_inproc:facade")
    module = sys.modules["myapp_inproc"]
    assert facade is module.facade
    made = load_app("myapp_inproc:make")
    assert isinstance(made, DefaultFacade) and made is not module.facade
    # A class is a factory: --app svc.webhook:DefaultFacade serves an empty facade.
    assert isinstance(load_app("svc.webhook:DefaultFacade"), DefaultFacade)
    monkeypatch.delitem(sys.modules, "myapp_inproc")
