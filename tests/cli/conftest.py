"""Fixtures of the CLI tests; running ``python -m svc`` lives in ``tests/_support/serve.py``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with the config ``svc init`` writes (run in-process: fast)."""
    from click.testing import CliRunner

    from svc.cli import cli

    result = CliRunner().invoke(cli, ["init", str(tmp_path / "proj")])
    assert result.exit_code == 0, result.output
    return tmp_path / "proj"
