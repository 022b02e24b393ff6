"""The ``svc`` command-line tool: the only layer that reads the environment or disk config.

Commands import their heavy dependencies (Quart, hypercorn, pydantic, ...)
when they run, so ``svc --version`` and ``svc --help`` start fast. The error
tree is drawn in ``svc.cli._errors``; generated tokens come from ``secrets``.
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
from ._main import cli as cli
from ._main import main as main
from ._tokens import generate_service_token as generate_service_token
from ._tokens import generate_verify_token as generate_verify_token

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
    "cli",
    "generate_service_token",
    "generate_verify_token",
    "main",
]
