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
path, a secret, an env value or a connection string; the two exceptions quote
what cannot hold one of svc's secrets: the refusal of the user's own code
(``--app`` and the other handler modules) names the target and the exception
it raised, and an address that cannot be bound names it and the system's
reason (``describe_cause``). click's own usage errors
are described by :func:`describe_usage_error`: it names the option (a name is
not a secret) and never the value given.
"""

from __future__ import annotations

import os
import re
from difflib import get_close_matches
from typing import IO, Any, Final

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

_OPTION_NAME: Final = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9_-]{0,40}$")
_NO_COMMAND: Final[Any] = getattr(click.exceptions, "NoArgsIsHelpError", ())
"""What click 8.2+ raises for a group run without a command (click 8.1 prints its help)."""


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


MAX_CAUSE: Final = 300
"""The longest cause ``describe_cause`` gives, in characters."""


def describe_cause(exc: BaseException) -> str:
    """``Class: message`` of an exception on one line, cut to ``MAX_CAUSE`` characters.

    Only for exceptions whose message holds no secret: the user's own code (an
    import, a factory) and the operating system's refusal of a bind.
    """
    text = " ".join(f"{type(exc).__name__}: {exc}".split()).removesuffix(":")
    return text if len(text) <= MAX_CAUSE else text[: MAX_CAUSE - 3] + "..."


def shown_target(target: str) -> str:
    """A ``module:attribute`` target as an error names it: printable, at most 200 characters."""
    text = "".join(c if c.isprintable() else "?" for c in target)
    return text if len(text) <= 200 else text[:197] + "..."


def describe_usage_error(exc: click.UsageError) -> str:
    """One line for a click usage error: the option or command named, never the value typed.

    An unknown option is named with click's near-miss suggestion; an unknown
    command is not echoed (it may be a pasted value), only the closest known one.
    """
    ctx = exc.ctx
    where = _command_path(ctx)
    hint = f"Try '{where} --help'."
    if isinstance(exc, click.NoSuchOption):
        name = exc.option_name if _OPTION_NAME.match(exc.option_name) else None
        said = f"no such option '{name}'" if name else "no such option"
        return f"{said}{_suggest(exc.possibilities)}. {hint}"
    if isinstance(exc, click.BadOptionUsage):
        name = exc.option_name if _OPTION_NAME.match(exc.option_name) else None
        return f"option '{name}' needs a value. {hint}" if name else f"bad option use. {hint}"
    if isinstance(exc, click.MissingParameter):
        return f"missing {_param_name(exc.param, exc.param_type)}. {hint}"
    if isinstance(exc, click.BadParameter):
        return f"invalid value for {_param_name(exc.param, None)}{_choices(exc.param)}. {hint}"
    if isinstance(exc, _NO_COMMAND):
        return f"missing command. {hint}"
    typed = getattr(exc, "command_name", None)
    if isinstance(typed, str) and ctx is not None and isinstance(ctx.command, click.Group):
        known = ctx.command.list_commands(ctx)
        return f"unknown command{_suggest(get_close_matches(typed, known))}. {hint}"
    if "extra argument" in exc.message:
        return f"unexpected extra argument. {hint}"
    return f"unknown command, option or argument. {hint}"


def _command_path(ctx: click.Context | None) -> str:
    names: list[str] = []
    while ctx is not None:
        names.append(ctx.info_name or "" if ctx.parent is not None else "svc")
        ctx = ctx.parent
    return " ".join(reversed(names)) or "svc"


def _suggest(possibilities: list[str] | None) -> str:
    if not possibilities:
        return ""
    return f" (did you mean '{possibilities[0]}'?)"


def _param_name(param: click.Parameter | None, param_type: str | None) -> str:
    if param is None:
        return param_type or "a value"
    if isinstance(param, click.Option):
        longest = max(param.opts, key=len)
        return f"option '{longest}'"
    return f"argument '{param.human_readable_name}'"


def _choices(param: click.Parameter | None) -> str:
    if param is not None and isinstance(param.type, click.Choice):
        return " (choose from " + ", ".join(str(c) for c in param.type.choices) + ")"
    return ""


def describe_store_failure(code: str, message: str, *, sqlite_path: str | None) -> str:
    """Why the store did not open: the SQLite path checked on disk, else the store's own sentence.

    Store messages are safe by contract (no path, DSN or value); a SQLite path
    is inspected here, where the disk may be read, and never echoed.
    """
    said = "the store could not be opened or migrated"
    if sqlite_path is not None and sqlite_path != ":memory:":
        path = os.path.abspath(sqlite_path)
        folder = os.path.dirname(path)
        if not os.path.isdir(folder):
            return f"{said}: the SQLite file's folder does not exist (create it first)."
        if os.path.isdir(path):
            return f"{said}: the SQLite path is a folder, not a file."
        target = path if os.path.exists(path) else folder
        if not os.access(target, os.W_OK):
            return f"{said}: the SQLite file or its folder is not writable."
    return f"{said} ({code}): {message}"
