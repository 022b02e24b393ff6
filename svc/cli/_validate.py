"""``svc config validate``: exit 0 when the file passes every check, 1 with a safe error."""

from __future__ import annotations

import click

from ._errors import CliUsageError

__all__ = ["config"]


@click.group()
def config() -> None:
    """Config file commands."""


@config.command()
@click.argument("path", required=False, metavar="[PATH]")
@click.option("--config", "config_path", metavar="PATH", help="Config file (instead of PATH).")
def validate(path: str | None, config_path: str | None) -> None:
    """Check a config file's structure and every profile (no secret is read)."""
    if (path is None) == (config_path is None):
        raise CliUsageError("give the config file once: PATH or --config PATH.")
    from ._config import config_summary, load_config

    loaded = load_config(path if path is not None else config_path or "")
    counts = config_summary(loaded)
    click.echo(
        f"config valid: {counts['profiles']} profile(s), "
        f"{counts['envReferences']} env reference(s), "
        f"{counts['flowsProfiles']} with flows."
    )
