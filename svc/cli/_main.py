"""The click command group behind the ``svc`` console script."""

from __future__ import annotations

import click

from .._version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    except click.UsageError:
        # The offending value may be a path or a secret: never echo it back.
        click.echo("Error: unknown command, option or argument. Try 'svc --help'.", err=True)
        raise SystemExit(1) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(1) from None
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
