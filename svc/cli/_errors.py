"""Errors of the command-line tool, in one tree; each one exits 1 with a safe message.

    CliError                      base (a ``click.ClickException``; exit code 1)
    +-- CliUsageError             flags that do not go together, bad flag values
    +-- CliConfigError            the config file cannot be read or parsed
    |   +-- ConfigValidationError the file parsed but breaks a rule (``field`` names where)
    +-- SecretResolutionError     an env-referenced value is missing or malformed
    +-- LiveGuardError            live mode without its flags or its two gates
    +-- OutputError               an output file refused or not writable
    +-- DoctorError               at least one doctor check failed
    +-- ServeError                the service could not start (store, bind, a handler import)
    +-- PromptInputError          an interactive answer refused (``setup``)
    +-- SetupInputError           ``setup`` cannot write its files
    +-- MessagesError             the local service refused or could not be reached

``svc.http.ServiceError`` (the service error) is turned into ``ConfigValidationError``
before it reaches the user. Messages are fixed sentences: they never hold a
path, a secret, an env value or a connection string.
"""

from __future__ import annotations

from typing import IO, Any

import click

__all__ = [
    "CliConfigError",
    "CliError",
    "CliUsageError",
    "ConfigValidationError",
    "DoctorError",
    "LiveGuardError",
    "MessagesError",
    "OutputError",
    "PromptInputError",
    "SecretResolutionError",
    "ServeError",
    "SetupInputError",
]


class CliError(click.ClickException):
    """A refusal of the tool: ``Error: <message>`` on stderr and exit 1."""

    exit_code = 1
    code = "cli_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True, file=file)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, field={self.field!r})"


class CliUsageError(CliError):
    """Flags that do not go together, or a flag value refused."""

    code = "usage"


class CliConfigError(CliError):
    """The config file is missing, unreadable or not YAML/JSON."""

    code = "config"


class ConfigValidationError(CliConfigError):
    """The config file parsed but breaks a rule; ``field`` is the dotted place."""

    code = "config_validation"


class SecretResolutionError(CliError):
    """An env-referenced secret or id is missing or malformed (its value is never shown)."""

    code = "secret_resolution"


class LiveGuardError(CliError):
    """Live mode refused: flags missing, or ``SVC_LIVE_ENABLE``/``SVC_YES_LIVE`` not 1."""

    code = "live_guard"


class OutputError(CliError):
    """An output file was refused (exists, unsafe name) or could not be written."""

    code = "output"


class DoctorError(CliError):
    """At least one ``doctor`` check failed."""

    code = "doctor"


class ServeError(CliError):
    """The service could not start: store, bind, or a handler import (flows, outbox)."""

    code = "serve"


class PromptInputError(CliError):
    """An interactive ``setup`` answer was refused."""

    code = "prompt_input"


class SetupInputError(CliError):
    """``setup`` could not write its files (nothing is left behind)."""

    code = "setup_input"


class MessagesError(CliError):
    """The ``messages`` commands could not reach the local service or were refused."""

    code = "messages"
