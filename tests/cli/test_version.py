"""``svc --version`` and ``python -m svc --version`` read nothing and exit 0."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

import svc
from svc.cli import cli


def test_version_flag_prints_the_package_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"svc {svc.__version__}\n"


def test_python_dash_m_runs_the_cli() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "svc", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0
    assert completed.stdout.strip() == f"svc {svc.__version__}"


def test_unknown_command_exits_1_without_echoing_the_value() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "svc", "/etc/secret-path-EAAGtoken"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 1
    assert "secret-path" not in completed.stderr + completed.stdout
    assert "svc --help" in completed.stderr


def test_unknown_flag_exits_1_without_echoing_the_value() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "svc", "--token=EAAGsecret"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 1
    assert "EAAGsecret" not in completed.stderr + completed.stdout


HEAVY = ("quart", "quart_trio", "hypercorn", "httpx", "cryptography", "pydantic", "trio", "yaml")


def test_version_and_help_import_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from svc.cli import main\n"
        "sys.argv = ['svc', ARG]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))\n"
    )
    for arg in ("--version", "--help"):
        completed = subprocess.run(
            [sys.executable, "-c", probe.replace("ARG", repr(arg))],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.splitlines()[-1] == "[]"
