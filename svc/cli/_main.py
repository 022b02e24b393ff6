"""The click command group behind the ``svc`` console script.

Only click and the standard library are imported here and in the command
modules' top levels: ``svc --version`` and ``svc --help`` stay fast, and each
command imports what it needs (Quart, hypercorn, pydantic, ...) when it runs.
"""

from __future__ import annotations

import importlib

import click

from .._version import __version__
from ._errors import describe_usage_error

# name -> (module, attribute, one-line help): a command's module is imported only when
# that command runs, so ``svc --version`` and ``svc --help`` load click alone.
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("._init", "init", "Write a config file and an .env.example (count-only output)."),
    "setup": ("._operator", "setup", "Prompt for values; write the config and .env.local."),
    "onboarding": ("._operator", "onboarding", "Print the callback URL and fresh tokens."),
    "config": ("._validate", "config", "Validate a config file."),
    "doctor": ("._operator", "doctor", "Offline checks of runtime, config, routes, OpenAPI."),
    "upgrade": ("._operator", "upgrade", "Upgrade the installed svc package set with pip."),
    "openapi": ("._operator", "openapi", "Print the OpenAPI 3.1 document of the service."),
    "serve": ("._serve", "serve", "Run the service (dry run or live)."),
    "dev": ("._dev", "dev", "Talk to your bot on a local page (dry run, reloads on change)."),
    "messages": ("._messages", "messages", "List or show projected messages of a running service."),
    "broadcast": ("._broadcast", "broadcast", "Send a template to a CSV of recipients; status."),
    "webhook": ("._operator", "webhook", "Webhook helpers (verify tokens)."),
    "flows": ("._flows", "flows", "WhatsApp Flows helpers (key generation)."),
    "outbox": ("._outbox", "outbox", "List outbox items; retry dead ones."),
    "inbox": ("._inbox", "inbox", "Updates waiting for a handler: list, retry, drop."),
    "store": ("._store_cmd", "store", "Store maintenance: prune old records."),
}
_ALIASES = {"update": "upgrade"}


class _LazyGroup(click.Group):
    """A group that imports a command's module when the command is looked up to run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        alias = _ALIASES.get(cmd_name)
        target = _COMMANDS.get(alias or cmd_name)
        if target is None:
            return None
        module, attribute, _ = target
        command: click.Command = getattr(importlib.import_module(module, __package__), attribute)
        if alias is not None:
            return click.Command(
                name=cmd_name,
                callback=command.callback,
                params=command.params,
                help=f"Alias of {alias}.",
                hidden=True,
            )
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, short) for name, (_, _, short) in sorted(_COMMANDS.items())]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="svc", message="%(prog)s %(version)s")
def cli() -> None:
    """svc: WhatsApp Cloud API service, library and operator tool."""


def main() -> None:
    """Entry point of the console script; usage errors exit 1 as decisions.md section 7 asks."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        raise SystemExit(1) from None
    except click.UsageError as exc:
        # Option and command names are shown; a value typed may be a path or a secret: never.
        click.echo(f"Error: {describe_usage_error(exc)}", err=True)
        raise SystemExit(1) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(1) from None
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except OSError as exc:
        # A path the system refuses where a command looks (a name too long, no permission):
        # its reason only; the exception's text would quote the path.
        reason = exc.strerror or type(exc).__name__
        click.echo(f"Error: a file or folder could not be used: {reason}.", err=True)
        raise SystemExit(1) from None
