"""The click command group behind the ``svc`` console script.

Only click and the standard library are imported here and in the command
modules' top levels: ``svc --version`` and ``svc --help`` stay fast, and each
command imports what it needs (Quart, hypercorn, pydantic, ...) when it runs.
"""

from __future__ import annotations

import click

from .._version import __version__
from ._flows import flows
from ._init import init
from ._messages import messages
from ._operator import doctor, onboarding, openapi, setup, upgrade, webhook
from ._serve import serve
from ._validate import config


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="svc", message="%(prog)s %(version)s")
def cli() -> None:
    """svc: WhatsApp Cloud API service, library and operator tool."""


for _command in (init, setup, onboarding, config, doctor, upgrade, openapi, serve, messages):
    cli.add_command(_command)
cli.add_command(webhook)
cli.add_command(flows)
cli.add_command(
    click.Command(
        name="update",
        callback=upgrade.callback,
        params=upgrade.params,
        help="Alias of upgrade.",
        hidden=True,
    )
)


def main() -> None:
    """Entry point of the console script; usage errors exit 1 as decisions.md section 7 asks."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        raise SystemExit(1) from None
    except click.UsageError:
        # The offending value may be a path or a secret: never echo it back.
        click.echo("Error: unknown command, option or argument. Try 'svc --help'.", err=True)
        raise SystemExit(1) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(1) from None
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
