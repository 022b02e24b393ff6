"""The declared public surface of ``svc.cli`` and ``svc.asgi``: ``__all__`` is complete."""

from __future__ import annotations

import svc.asgi
import svc.cli
from svc.cli import _errors, _tokens


def test_every_error_and_token_helper_is_exported() -> None:
    exported = {name for name in dir(svc.cli) if not name.startswith("_")}
    assert set(svc.cli.__all__) == exported
    assert set(_errors.__all__) <= set(svc.cli.__all__)
    assert {"generate_service_token", "generate_verify_token"} <= set(_tokens.__all__)
    assert svc.asgi.__all__ == ["create"]


def test_every_cli_error_is_a_cli_error_with_exit_code_1() -> None:
    for name in _errors.__all__:
        error = getattr(svc.cli, name)
        assert issubclass(error, svc.cli.CliError)
        assert error.exit_code == 1
    assert issubclass(svc.cli.ConfigValidationError, svc.cli.CliConfigError)
