"""``svc init``: a starter config and ``.env.example``, never overwriting anything."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

import click

from svc.graph import DEFAULT_API_VERSION, DEFAULT_BASE_URL

from ._errors import CliUsageError, OutputError

__all__ = ["ENV_EXAMPLE", "GITIGNORE", "init", "render_config"]

_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
SECRET_ENV_NAMES: Final = {
    "accessToken": "SVC_ACCESS_TOKEN",
    "webhookVerifyToken": "SVC_VERIFY_TOKEN",
    "webhookAppSecret": "SVC_APP_SECRET",
    "serviceBearerToken": "SVC_SERVICE_TOKEN",
}
INBOX_KEY_ENV_NAME: Final = "SVC_INBOX_KEY"

ENV_EXAMPLE: Final = """\
# svc environment: copy to .env.local (mode 0600), fill in, never commit real values.
# Live mode reads these from the --env-file and the process environment (which wins).
SVC_ACCESS_TOKEN=
SVC_VERIFY_TOKEN=
SVC_APP_SECRET=
SVC_SERVICE_TOKEN=
# Updates waiting for your handlers are stored encrypted under this key: openssl rand -base64 32
SVC_INBOX_KEY=
SVC_WABA_ID=
SVC_PHONE_NUMBER_ID=
# Both gates must be 1 before `svc serve --live --yes-live --env-file FILE` starts.
SVC_LIVE_ENABLE=0
SVC_YES_LIVE=0
"""


GITIGNORE: Final = """\
# svc: env files hold secrets (.env.local, .env.cli, .env.live) and stores hold messages.
.env*
!.env.example
*.db
*.db-shm
*.db-wal
flows_private_key.pem
"""
"""Written beside the config when the folder has no ``.gitignore`` (an existing one is kept)."""


def config_data(
    profile: str,
    *,
    waba_id: object = None,
    phone_number_id: object = None,
    webhook_path: str = "/webhooks/whatsapp",
    api_prefix: str = "/api",
) -> dict[str, object]:
    """The config mapping ``init`` and ``setup`` write (secrets as env references only)."""
    return {
        "version": 1,
        "defaultProfile": profile,
        "profiles": {
            profile: {
                "platform": {
                    "apiVersion": DEFAULT_API_VERSION,
                    "baseUrl": DEFAULT_BASE_URL,
                    "wabaId": waba_id if waba_id is not None else {"env": "SVC_WABA_ID"},
                    "phoneNumberId": phone_number_id
                    if phone_number_id is not None
                    else {"env": "SVC_PHONE_NUMBER_ID"},
                },
                "webhook": {"path": webhook_path, "maxBodyBytes": 1048576},
                "service": {"host": "127.0.0.1", "port": 8787, "apiPrefix": api_prefix},
                "secrets": {key: {"env": name} for key, name in SECRET_ENV_NAMES.items()},
                "inbox": {"keys": [{"env": INBOX_KEY_ENV_NAME}]},
            }
        },
    }


def render_config(data: dict[str, object], fmt: str) -> str:
    """The file text: JSON (indented) or commented YAML."""
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    import yaml

    class _Dumper(yaml.SafeDumper):
        """Block style, except ``{env: NAME}`` references, which stay on one line."""

    def mapping(dumper: yaml.SafeDumper, value: dict[str, object]) -> yaml.Node:
        flow = list(value) == ["env"]
        return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=flow)

    _Dumper.add_representer(dict, mapping)
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=100)
    header = (
        "# svc config (decisions.md section 2). Secrets are only ever {env: NAME} references.\n"
        "# Try it: svc serve --config <this file> --dry-run\n"
    )
    return header + body


def check_profile_name(name: str) -> str:
    if not _PROFILE_NAME.fullmatch(name):
        raise CliUsageError("--profile must be 1..32 letters, digits, '_' or '-'.")
    return name


@click.command()
@click.argument("directory", default=".", metavar="[DIR]")
@click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing.")
@click.option(
    "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", help="Config format."
)
@click.option("--profile", default="default", metavar="NAME", help="Profile name.")
def init(directory: str, dry_run: bool, fmt: str, profile: str) -> None:
    """Write a starter config and .env.example into DIR (created when missing)."""
    check_profile_name(profile)
    if not directory or "\x00" in directory:
        raise CliUsageError("DIR must be a folder path.")
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise OutputError("DIR exists and is not a folder.")
    config_name = "svc.config.json" if fmt == "json" else "svc.config.yaml"
    targets = [folder / config_name, folder / ".env.example"]
    if any(path.exists() or path.is_symlink() for path in targets):
        raise OutputError("the config or .env.example already exists; nothing was written.")
    ignore = folder / ".gitignore"
    names = [config_name, ".env.example"]
    if not (ignore.exists() or ignore.is_symlink()):
        names.append(".gitignore")
    files = f"{len(names)} files ({', '.join(names)})"
    counts = "1 profile, 5 secret references, 2 id references."
    text = render_config(config_data(profile), fmt)
    if dry_run:
        click.echo(f"svc init (dry run): would write {files}; {counts}")
        return
    from ._inputs import write_exclusive

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise OutputError("DIR cannot be created.") from None
    written: list[Path] = []
    try:
        for path, body in zip(
            [folder / name for name in names], [text, ENV_EXAMPLE, GITIGNORE], strict=False
        ):
            write_exclusive(path, body.encode("utf-8"))
            written.append(path)
    except OutputError:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    click.echo(f"svc init: wrote {files}; {counts}")
    # The folder is not echoed (count-only output): the hint names its placeholder instead.
    click.echo(
        f"Next (DIR = the folder you gave): svc serve --config DIR/{config_name} "
        "--dry-run --database DIR/svc.db"
    )
