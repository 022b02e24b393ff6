"""``svc dev``: serve a bot in dry run with the dev page, and restart it when its code changes.

The dev folder (``.svc-dev`` by default) is made once and reused: a config with one
profile, the secrets (kept stable across restarts, mode 0600) and the SQLite store
``dev.db``. The command prints one URL with the page's token, then serves through
``svc serve``'s own runtime (``ServePlan``, ``run_serve``) on 127.0.0.1 with the dev
session mounted; ``watchfiles`` restarts that serving process when a Python file
under the working folder changes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import click

from ._errors import CliUsageError, LiveGuardError, OutputError
from ._inputs import parse_int

if TYPE_CHECKING:
    from ..dev import DevSession
    from ._runtime import ServePlan

__all__ = ["DevFolder", "dev", "dev_plan", "dev_session", "open_dev_folder", "serve_dev"]

HOST: Final = "127.0.0.1"
DEV_PROFILE: Final = "dev"
DEV_WABA_ID: Final = "102290129340398"
DEV_PHONE_NUMBER_ID: Final = "106540352242922"
DEV_DISPLAY_PHONE: Final = "15550783881"
_SECRET_NAMES: Final = (
    "SVC_APP_SECRET",
    "SVC_VERIFY_TOKEN",
    "SVC_SERVICE_TOKEN",
    "SVC_INBOX_KEY",
    "SVC_DEV_TOKEN",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DevFolder:
    """The dev folder's paths and its secrets (by env name)."""

    path: Path
    config: Path
    secrets_file: Path
    database: Path
    secrets: dict[str, str]

    @property
    def token(self) -> str:
        return self.secrets["SVC_DEV_TOKEN"]


def _generate(name: str) -> str:
    import secrets as random

    from ..crypto import generate_inbox_key
    from ._tokens import generate_app_secret, generate_service_token, generate_verify_token

    if name == "SVC_APP_SECRET":
        return generate_app_secret()
    if name == "SVC_VERIFY_TOKEN":
        return generate_verify_token()
    if name == "SVC_SERVICE_TOKEN":
        return generate_service_token()
    if name == "SVC_INBOX_KEY":
        return generate_inbox_key()
    return random.token_urlsafe(24)


def _read_secrets(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep and name in _SECRET_NAMES and value:
            found[name] = value
    return found


def open_dev_folder(path: Path) -> DevFolder:
    """Make the dev folder (config, secrets, ``.gitignore``) or reuse the one there."""
    from ._init import config_data, render_config

    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        ignore = path / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# svc dev: secrets and a store of test chats; never commit.\n*\n")
        config = path / "svc.config.yaml"
        if not config.exists():
            data = config_data(
                DEV_PROFILE, waba_id=DEV_WABA_ID, phone_number_id=DEV_PHONE_NUMBER_ID
            )
            config.write_text(render_config(data, "yaml"), encoding="utf-8")
        secrets_file = path / "secrets.env"
        values = _read_secrets(secrets_file) if secrets_file.exists() else {}
        missing = [name for name in _SECRET_NAMES if name not in values]
        if missing:
            values.update({name: _generate(name) for name in missing})
            text = "".join(f"{name}={values[name]}\n" for name in _SECRET_NAMES)
            descriptor = os.open(secrets_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
    except OSError:
        raise OutputError("the dev folder cannot be created or written.") from None
    return DevFolder(
        path=path,
        config=config,
        secrets_file=secrets_file,
        database=path / "dev.db",
        secrets=values,
    )


def dev_plan(
    folder: DevFolder, app_target: str, port: int, *, max_attempts: int = 5
) -> ServePlan:
    """The ``ServePlan`` of ``svc dev``: dry run, SQLite in the folder, loopback, one process."""
    from dataclasses import asdict

    from ..crypto import parse_inbox_key
    from ._config import dry_run_tokens, load_config, resolve_profile
    from ._runtime import ServePlan

    config = load_config(folder.config)
    _, section = config.section(DEV_PROFILE)
    profile = resolve_profile(config, DEV_PROFILE, folder.secrets, placeholders=True)
    tokens = dry_run_tokens(section, folder.secrets)
    return ServePlan(
        profile_fields=asdict(profile),
        secrets=(
            "dryrun-access-dev",
            tokens.webhook_verify_token,
            tokens.webhook_app_secret,
            tokens.service_bearer_token,
        ),
        dry_run=True,
        sqlite_path=str(folder.database),
        host=HOST,
        port=port,
        app=app_target,
        handler_options={"max_attempts": max_attempts},
        inbox_keys=(parse_inbox_key(folder.secrets["SVC_INBOX_KEY"]),),
        sqlite_writer="thread",
    )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def dev_session(plan: ServePlan, token: str, say: Callable[[str], None] = _say) -> DevSession:
    """The dev session of one serving process of ``plan`` (its lines go to ``say``)."""
    from ..dev import DevSession

    profile = plan.profile()
    _, _, app_secret, _ = plan.secrets
    assert plan.sqlite_path is not None, "svc dev's store is dev.db in its folder"
    return DevSession(
        token=token,
        app_secret=app_secret,
        webhook_path=profile.webhook_path,
        phone_number_id=profile.phone_number_id,
        display_phone_number=DEV_DISPLAY_PHONE,
        waba_id=profile.waba_id or DEV_WABA_ID,
        folder=Path(plan.sqlite_path).parent,
        say=say,
    )


def serve_dev(plan: ServePlan, token: str) -> None:
    """One serving process of ``svc dev`` (the target ``watchfiles`` restarts)."""
    from ._runtime import show_svc_log_lines
    from ._workers import run_serve

    session = dev_session(plan, token)
    show_svc_log_lines()
    try:
        code = run_serve(plan, dev=session)
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(1) from None
    if code:
        raise SystemExit(code)


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@click.command()
@click.option(
    "--app",
    "app_target",
    required=True,
    metavar="MODULE:ATTR",
    help="Your webhook handlers: a facade (e.g. bot:bot) or a zero-argument factory of one.",
)
@click.option("--port", default="8787", metavar="PORT", help="Port on 127.0.0.1 (0: a free one).")
@click.option(
    "--dir", "folder", default=".svc-dev", metavar="PATH", help="The dev folder (default .svc-dev)."
)
@click.option("--no-reload", is_flag=True, help="Do not restart the bot when its code changes.")
@click.option(
    "--handler-max-attempts",
    default="5",
    metavar="N",
    help="Runs of one update at most before it becomes a dead letter (default 5).",
)
@click.option("--live", is_flag=True, hidden=True)
def dev(
    app_target: str,
    port: str,
    folder: str,
    no_reload: bool,
    handler_max_attempts: str,
    live: bool,
) -> None:
    """Talk to your bot on a local page: dry run, loopback, reloaded on change."""
    if live:
        raise LiveGuardError("svc dev runs in dry run only; serve live with svc serve --live.")
    if not folder or "\x00" in folder:
        raise CliUsageError("--dir must be a folder path.")
    port_number = parse_int(port, "--port", low=0, high=65535)
    attempts = parse_int(handler_max_attempts, "--handler-max-attempts", low=1, high=100)
    from ._user_code import load_app

    load_app(app_target)  # fail before anything is made when the app cannot be imported
    dev_folder = open_dev_folder(Path(folder))
    if port_number == 0:
        port_number = _free_port()
    plan = dev_plan(dev_folder, app_target, port_number, max_attempts=attempts)
    click.echo(f"svc dev: open http://{HOST}:{port_number}/dev/?token={dev_folder.token}", err=True)
    click.echo(
        f"svc dev: dry run, store {dev_folder.database}; "
        + ("no reload." if no_reload else "restarts when a .py file here changes."),
        err=True,
    )
    if no_reload:
        serve_dev(plan, dev_folder.token)
        return
    from watchfiles import Change, PythonFilter, run_process

    def reloading(changes: set[tuple[Change, str]]) -> None:
        names = sorted({Path(path).name for _, path in changes})
        changed = ", ".join(names)[:200]
        print(f"svc dev: {changed} changed; restarting.", file=sys.stderr, flush=True)

    run_process(
        Path.cwd(),
        target=serve_dev,
        args=(plan, dev_folder.token),
        target_type="function",
        callback=reloading,
        watch_filter=PythonFilter(ignore_paths=(str(dev_folder.path.resolve()),)),
        debounce=400,
    )
