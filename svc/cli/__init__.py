"""The ``svc`` command-line tool: the only layer that reads the environment or disk config."""

from ._main import cli as cli
from ._main import main as main

__all__ = ["cli", "main"]
