"""Checks of command-line values and the live environment; messages never echo the value."""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from svc._text import decimal_int, has_ascii_control

from ._errors import (
    CliUsageError,
    LiveGuardError,
    OutputError,
    SecretResolutionError,
    ServeError,
    describe_cause,
    shown_target,
)

__all__ = [
    "ENV_NAME_PATTERN",
    "HANDLER_SETTINGS",
    "LIVE_GATES",
    "HandlerSetting",
    "check_env_file_name",
    "check_env_name",
    "check_out_path",
    "check_store_flags",
    "dotenv_line",
    "env_file_environment",
    "import_attribute",
    "import_callable",
    "live_environment",
    "parse_int",
    "read_dotenv",
    "read_handler_settings",
    "write_exclusive",
]

ENV_NAME_PATTERN: Final = re.compile(r"[A-Z][A-Z0-9_]*")
LIVE_GATES: Final = ("SVC_LIVE_ENABLE", "SVC_YES_LIVE")


def parse_int(value: str, option: str, *, low: int, high: int) -> int:
    """An integer option in ``low..high``; the refusal names the option, not the value."""
    number = decimal_int(value.strip(), max_digits=len(str(high)))
    if number is None or not low <= number <= high:
        raise CliUsageError(f"{option} must be an integer {low}..{high}.")
    return number


@dataclass(frozen=True, slots=True)
class HandlerSetting:
    """One handler runtime setting: its ``HandlerOptions`` field, its ``svc serve`` flag (and
    click parameter), its environment variable (``svc.asgi``) and its range."""

    field: str
    flag: str
    env: str
    low: int
    high: int

    @property
    def param(self) -> str:
        """The click parameter's name of the flag."""
        return self.flag[2:].replace("-", "_")


HANDLER_SETTINGS: Final = (
    HandlerSetting("concurrency", "--handler-concurrency", "SVC_HANDLER_CONCURRENCY", 1, 1024),
    HandlerSetting("max_waiting", "--handler-max-waiting", "SVC_HANDLER_MAX_WAITING", 0, 100_000),
    HandlerSetting("timeout", "--handler-timeout", "SVC_HANDLER_TIMEOUT", 1, 86_400),
    HandlerSetting("max_attempts", "--handler-max-attempts", "SVC_HANDLER_MAX_ATTEMPTS", 1, 100),
)


def read_handler_settings(given: Mapping[str, Any], *, from_env: bool) -> dict[str, int]:
    """The handler settings in ``given`` (flag values by click parameter, or the environment
    by variable), keyed by ``HandlerOptions`` field and checked in one order; a refusal names
    the flag or the variable. An unset (or, in the environment, empty) one is left out."""
    settings: dict[str, int] = {}
    for setting in HANDLER_SETTINGS:
        name = setting.env if from_env else setting.param
        text = given.get(name)
        if text is None or (from_env and not text):
            continue
        label = setting.env if from_env else setting.flag
        settings[setting.field] = parse_int(text, label, low=setting.low, high=setting.high)
    return settings


def check_env_name(value: str, option: str) -> str:
    """An environment variable name ``[A-Z][A-Z0-9_]*`` (never a value)."""
    if not ENV_NAME_PATTERN.fullmatch(value) or len(value) > 128:
        raise CliUsageError(f"{option} must be an env name matching [A-Z][A-Z0-9_]*.")
    return value


def check_store_flags(database: str | None, database_url_env: str | None) -> None:
    """At most one store: a SQLite file path (``--database``), or the env name of a PostgreSQL
    DSN (``--database-url-env``)."""
    if database is not None and database_url_env is not None:
        raise CliUsageError("--database and --database-url-env are mutually exclusive.")
    if database is not None and (not database or "\x00" in database):
        raise CliUsageError("--database must be a SQLite file path.")
    if database_url_env is not None:
        check_env_name(database_url_env, "--database-url-env")


def _unsafe_text(value: str) -> bool:
    return not value or has_ascii_control(value) or "\\" in value


def check_env_file_name(value: str) -> Path:
    """A relative local file name: no absolute path, ``..``, backslash or control character."""
    parts = value.split("/")
    if (
        _unsafe_text(value)
        or value.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise CliUsageError(
            "--env-file must be a relative local file name (no '..', no absolute path)."
        )
    return Path(value)


def check_out_path(value: str) -> Path:
    """An output file that does not exist yet, with a safe name (``openapi --out``, keygen)."""
    if _unsafe_text(value):
        raise OutputError("the output path is empty or holds a control character or backslash.")
    parts = value.split("/")
    if any(part in (".", "..") for part in parts) or value.endswith("/"):
        raise OutputError("the output path must name a file, without '.' or '..' segments.")
    path = Path(value)
    if path.is_dir():
        raise OutputError("the output path is a directory.")
    if path.exists() or path.is_symlink():
        raise OutputError("the output file already exists; it is never overwritten.")
    return path


def write_exclusive(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Create ``path`` (never overwriting) and write ``data``; a failure leaves no file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise OutputError("the output file already exists; it is never overwritten.") from None
    except OSError:
        raise OutputError("the output file cannot be created (missing folder?).") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError:
        path.unlink(missing_ok=True)
        raise OutputError("the output file could not be written.") from None


def dotenv_line(name: str, value: str) -> str:
    """``NAME='value'`` that python-dotenv reads back as ``value`` exactly, newline included.

    Single quotes keep ``#``, spaces, double quotes and ``$`` literal; the two
    characters the single-quoted form decodes (backslash and quote) are escaped.
    svc reads its env files without ``${...}`` expansion (``read_dotenv``),
    so a secret holding ``${...}`` is not rewritten either.
    """
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"{check_env_name(name, 'name')}='{escaped}'\n"


def read_dotenv(env_file: Path) -> dict[str, str]:
    """The values of a dotenv file, taken literally (no ``${...}`` expansion, no environment).

    Expansion would read the process environment into a secret and change a
    value holding ``${...}``; a value without ``=`` is dropped.
    """
    from dotenv import dotenv_values

    values = dotenv_values(env_file, interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


def env_file_environment(env_file: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The env file's values (``read_dotenv``) overlaid by ``environ``, which wins."""
    if not env_file.is_file():
        raise SecretResolutionError("the env file does not exist or is not a file.")
    try:
        merged = read_dotenv(env_file)
    except (OSError, UnicodeDecodeError):
        raise SecretResolutionError("the env file cannot be read.") from None
    merged.update(environ)
    return merged


def live_environment(env_file: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The env file's values overlaid by the process environment (which wins); gates checked.

    Read with ``read_dotenv`` (values taken literally): the process environment
    is never changed.
    """
    merged = env_file_environment(env_file, environ)
    for gate in LIVE_GATES:
        if merged.get(gate) != "1":
            raise LiveGuardError(
                "live mode needs SVC_LIVE_ENABLE=1 and SVC_YES_LIVE=1 "
                "(in the env file or the environment)."
            )
    return merged


def refuse_target(option: str, target: str, said: str) -> ServeError:
    """The refusal of a ``module:attribute`` option: ``<option> <target>: <said>``."""
    return ServeError(f"{option} {shown_target(target)}: {said}")


def import_callable(target: str, option: str) -> Any:
    """The callable a ``module:attribute`` option names (``import_attribute``'s rules)."""
    found = import_attribute(target, option)
    if not callable(found):
        said = f"the target is not callable (type {type(found).__name__})."
        raise refuse_target(option, target, said)
    return found


def import_attribute(target: str, option: str, *, shape: str = "module:callable") -> Any:
    """The object a ``module:attribute`` option names, the working folder searched first.

    As ``python -m``, uvicorn and hypercorn do: the installed ``svc`` script
    has its own folder, not the working one, first on ``sys.path``. Every
    refusal names the option, the target and the cause: a module that is not
    there, or one that fails on import or exits (the exception's class and message: the
    user's own code, never a secret of svc), or an attribute it lacks.
    """
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise refuse_target(option, target, f"must look like {shape}.")
    working = os.getcwd()
    if working not in sys.path:
        sys.path.insert(0, working)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - what the user's module raises
        missing = isinstance(exc, ModuleNotFoundError) and (
            exc.name == module_name or module_name.startswith(f"{exc.name}.")
        )
        happened = "cannot be imported" if missing else "failed on import"
        said = f"module {module_name!r} {happened}: {describe_cause(exc)}"
        raise refuse_target(option, target, said) from None
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - or the user's __getattr__
            raise refuse_target(option, target, describe_cause(exc)) from None
    return found
