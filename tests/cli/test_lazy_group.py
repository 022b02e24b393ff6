"""The command group loads a command's module only when that command is looked up."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from svc.cli import cli
from svc.cli._main import _COMMANDS


def test_every_listed_command_resolves_to_itself() -> None:
    context = click.Context(cli)
    for name in _COMMANDS:
        command = cli.get_command(context, name)  # type: ignore[attr-defined]
        assert isinstance(command, click.Command)
        assert command.name == name


def test_help_lists_every_command_without_importing_them() -> None:
    code = (
        "import sys; from svc.cli import main; sys.argv=['svc','--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in ('svc.cli._serve','svc.cli._operator','svc.cli._flows',"
        "'svc.cli._init','svc.cli._messages','svc.cli._validate') if m in sys.modules]\n"
        "print('LOADED', loaded)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert "LOADED []" in completed.stdout
    for name in _COMMANDS:
        assert f"  {name} " in completed.stdout


def test_update_is_a_hidden_alias_of_upgrade() -> None:
    result = CliRunner().invoke(cli, ["update", "--dry-run"])
    assert result.exit_code == 0
    assert "pip" in result.output
