"""The ``svc`` command-line tool: the only layer that reads the environment or disk config.

Commands import their heavy dependencies (Quart, hypercorn, pydantic, ...)
when they run, so ``svc --version`` and ``svc --help`` start fast. The error
tree is drawn in ``svc.cli._errors``; generated tokens come from ``secrets``.
``svc.asgi`` builds its app from the live-process functions of ``svc.cli._live``.
"""

from ._errors import CliConfigError as CliConfigError
from ._errors import CliError as CliError
from ._errors import CliUsageError as CliUsageError
from ._errors import ConfigValidationError as ConfigValidationError
from ._errors import DoctorError as DoctorError
from ._errors import LiveGuardError as LiveGuardError
from ._errors import MessagesError as MessagesError
from ._errors import OutputError as OutputError
from ._errors import PromptInputError as PromptInputError
from ._errors import SecretResolutionError as SecretResolutionError
from ._errors import ServeError as ServeError
from ._errors import SetupInputError as SetupInputError
from ._live import handler_options_from_env as handler_options_from_env
from ._live import live_environment_from as live_environment_from
from ._live import load_app as load_app
from ._live import load_live_inbox_keyring as load_live_inbox_keyring
from ._live import load_live_inbox_keys as load_live_inbox_keys
from ._live import load_live_service as load_live_service
from ._live import open_migrated_store as open_migrated_store
from ._live import resolve_dsn as resolve_dsn
from ._main import cli as cli
from ._main import main as main
from ._serving import ConnectionGuard as ConnectionGuard
from ._serving import install_hypercorn_guard as install_hypercorn_guard
from ._tokens import generate_service_token as generate_service_token
from ._tokens import generate_verify_token as generate_verify_token

__all__ = [
    "CliConfigError",
    "CliError",
    "CliUsageError",
    "ConfigValidationError",
    "ConnectionGuard",
    "DoctorError",
    "LiveGuardError",
    "MessagesError",
    "OutputError",
    "PromptInputError",
    "SecretResolutionError",
    "ServeError",
    "SetupInputError",
    "cli",
    "generate_service_token",
    "generate_verify_token",
    "handler_options_from_env",
    "install_hypercorn_guard",
    "live_environment_from",
    "load_app",
    "load_live_inbox_keyring",
    "load_live_inbox_keys",
    "load_live_service",
    "main",
    "open_migrated_store",
    "resolve_dsn",
]
