"""Operator commands: setup, onboarding, webhook token, openapi, doctor and upgrade."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click

from svc._text import breaks_url_path, has_ascii_control_or_space, is_visible_ascii

from ._errors import (
    CliError,
    CliUsageError,
    DoctorError,
    OutputError,
    PromptInputError,
    SetupInputError,
)

if TYPE_CHECKING:
    import httpx

    from ..http import Profile

__all__ = ["doctor", "onboarding", "openapi", "setup", "upgrade", "webhook", "write_setup_files"]

_DIGITS = re.compile(r"[0-9]{1,64}")
_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
_MAX_SECRET_LENGTH: Final = 4096


# --- webhook token, onboarding -----------------------------------------------------------------


@click.group()
def webhook() -> None:
    """Webhook helpers."""


@webhook.command()
def token() -> None:
    """Print one freshly generated webhook verify token."""
    from ._tokens import generate_verify_token

    click.echo(generate_verify_token())


def _visible_secret(value: str) -> bool:
    """A pasted token or secret: 1..4096 visible ASCII characters."""
    return len(value) <= _MAX_SECRET_LENGTH and is_visible_ascii(value)


def _check_public_url(value: str) -> str:
    refusal = CliUsageError(
        "--public-url must be an https URL without whitespace, credentials, query or fragment."
    )
    if breaks_url_path(value):
        raise refusal
    _web_url(value, ("https",), refusal)
    return value.rstrip("/")


def _web_url(value: str, schemes: tuple[str, ...], refusal: CliUsageError) -> httpx.URL:
    """``value`` as a URL of one of ``schemes`` with a host and no credentials, else
    ``refusal`` (a malformed IDNA host too)."""
    import httpx

    try:
        url = httpx.URL(value)
        host = url.host  # decodes an IDNA A-label: UnicodeError when it is malformed
    except (httpx.InvalidURL, UnicodeError):
        raise refusal from None
    if url.scheme not in schemes or not host or url.userinfo:
        raise refusal
    return url


def _check_path(value: str, option: str) -> str:
    from ..http import ServiceError, check_service_path

    try:
        return check_service_path(value, option)
    except ServiceError:
        raise CliUsageError(
            f"{option} must be an absolute path of letters, digits and ._~- segments."
        ) from None


@click.command()
@click.option("--public-url", required=True, metavar="HTTPS_URL", help="Public https base URL.")
@click.option("--webhook-path", default="/webhooks/whatsapp", metavar="PATH", help="Webhook path.")
def onboarding(public_url: str, webhook_path: str) -> None:
    """Print the callback URL and fresh verify and service tokens; writes nothing."""
    from ._tokens import generate_service_token, generate_verify_token

    base = _check_public_url(public_url)
    path = _check_path(webhook_path, "--webhook-path")
    click.echo(f"callback URL:  {base}{path}")
    click.echo(f"verify token:  {generate_verify_token()}")
    click.echo(f"service token: {generate_service_token()}")
    click.echo("")
    click.echo("1. In the app dashboard (WhatsApp > Configuration) set the callback URL and the")
    click.echo("   verify token, then subscribe to the 'messages' field.")
    click.echo("2. Put the verify token in SVC_VERIFY_TOKEN and the service token in")
    click.echo("   SVC_SERVICE_TOKEN of your env file. Nothing was written.")


# --- setup ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Question:
    key: str
    prompt: str
    hide: bool
    default: str | None
    check: Callable[[str], bool]
    rule: str


def _safe_path(value: str) -> bool:
    from ..http import ServiceError, check_service_path

    try:
        check_service_path(value, "path")
    except ServiceError:
        return False
    return True


_QUESTIONS: Final = (
    _Question(
        "profile",
        "Profile name",
        False,
        "default",
        lambda v: bool(_PROFILE_NAME.fullmatch(v)),
        "1..32 letters, digits, '_' or '-'",
    ),
    _Question(
        "waba", "WABA id", False, None, lambda v: bool(_DIGITS.fullmatch(v)), "a digit string"
    ),
    _Question(
        "phone",
        "Phone number id",
        False,
        None,
        lambda v: bool(_DIGITS.fullmatch(v)),
        "a digit string",
    ),
    _Question(
        "access",
        "Access token",
        True,
        None,
        _visible_secret,
        "non-empty, at most 4096 visible characters",
    ),
    _Question(
        "app_secret",
        "App secret",
        True,
        None,
        _visible_secret,
        "non-empty, at most 4096 visible characters",
    ),
    _Question(
        "verify",
        "Webhook verify token (blank: generate)",
        True,
        "",
        lambda v: v == "" or _visible_secret(v),
        "at most 4096 visible characters",
    ),
    _Question(
        "service",
        "Service bearer token (blank: generate)",
        True,
        "",
        lambda v: v == "" or _visible_secret(v),
        "at most 4096 visible characters",
    ),
    _Question(
        "webhook_path",
        "Webhook path",
        False,
        "/webhooks/whatsapp",
        _safe_path,
        "an absolute path of safe segments",
    ),
    _Question(
        "api_prefix", "API prefix", False, "/api", _safe_path, "an absolute path of safe segments"
    ),
)


def write_setup_files(
    files: list[tuple[Path, bytes, int]],
    writer: Callable[[Path, bytes, int], None],
) -> None:
    """Write every file or none: a failure removes the files already written."""
    written: list[Path] = []
    try:
        for path, data, mode in files:
            writer(path, data, mode)
            written.append(path)
    except (OSError, CliError):
        for path in written:
            path.unlink(missing_ok=True)
        raise SetupInputError("the files could not be written; nothing was left behind.") from None


def _exclusive(path: Path, data: bytes, mode: int) -> None:
    from ._inputs import write_exclusive

    write_exclusive(path, data, mode=mode)


@click.command()
@click.argument("directory", default=".", metavar="[DIR]")
@click.option("--profile", metavar="NAME", help="Profile name (skips its prompt).")
def setup(directory: str, profile: str | None) -> None:
    """Prompt for the account values; write svc.config.yaml and .env.local (mode 0600)."""
    from ..crypto import generate_inbox_key
    from ._init import INBOX_KEY_ENV_NAME, config_data, render_config
    from ._inputs import dotenv_line
    from ._tokens import generate_service_token, generate_verify_token

    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise OutputError("DIR exists and is not a folder.")
    targets = (folder / "svc.config.yaml", folder / ".env.local")
    if any(path.exists() or path.is_symlink() for path in targets):
        raise OutputError("svc.config.yaml or .env.local already exists; nothing was written.")
    answers: dict[str, str] = {}
    for question in _QUESTIONS:
        if question.key == "profile" and profile is not None:
            value = profile
        else:
            value = click.prompt(
                question.prompt,
                default=question.default,
                hide_input=question.hide,
                show_default=not question.hide,
                type=str,
            )
            value = value.strip() if not question.hide else value
        if not question.check(value):
            raise PromptInputError(f"{question.prompt.split(' (')[0]} must be {question.rule}.")
        answers[question.key] = value
    verify = answers["verify"] or generate_verify_token()
    service = answers["service"] or generate_service_token()
    data = config_data(
        answers["profile"],
        waba_id=answers["waba"],
        phone_number_id=answers["phone"],
        webhook_path=answers["webhook_path"],
        api_prefix=answers["api_prefix"],
    )
    env_text = (
        "# svc live secrets: keep this file private (mode 0600), never commit it.\n"
        # Quoted so that every value reads back unchanged (quotes, '#', '$', spaces).
        + dotenv_line("SVC_ACCESS_TOKEN", answers["access"])
        + dotenv_line("SVC_VERIFY_TOKEN", verify)
        + dotenv_line("SVC_APP_SECRET", answers["app_secret"])
        + dotenv_line("SVC_SERVICE_TOKEN", service)
        + dotenv_line(INBOX_KEY_ENV_NAME, generate_inbox_key())
        + "# Set both to 1 when you are ready to serve live.\n"
        "SVC_LIVE_ENABLE=0\n"
        "SVC_YES_LIVE=0\n"
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        raise SetupInputError("DIR cannot be created.") from None
    write_setup_files(
        [
            (targets[0], render_config(data, "yaml").encode("utf-8"), 0o644),
            (targets[1], env_text.encode("utf-8"), 0o600),
        ],
        _exclusive,
    )
    generated = int(not answers["verify"]) + int(not answers["service"])
    click.echo(
        f"svc setup: wrote 2 files (svc.config.yaml, .env.local mode 0600); "
        f"1 profile, 5 secret references, {generated} token(s) and the inbox key generated."
    )


# --- openapi ------------------------------------------------------------------------------------


def _offline_app(config_path: str, profile: str | None) -> tuple[Any, Any]:
    """The app a profile describes, with synthetic secrets and the dry-run transport."""
    import dataclasses
    import os

    from ..graph import DryRunTransport
    from ..http import ServiceSecrets, create_app
    from ._config import load_config, resolve_profile
    from ._tokens import generate_app_secret, generate_service_token, generate_verify_token

    loaded = load_config(config_path)
    resolved = resolve_profile(loaded, profile, os.environ, placeholders=True)
    # The Flows route needs the private key and a handler; the offline app documents the rest.
    resolved = dataclasses.replace(resolved, flows_path=None)
    secrets = ServiceSecrets(
        access_token=generate_service_token(),
        webhook_verify_token=generate_verify_token(),
        webhook_app_secret=generate_app_secret(),
        service_bearer_token=generate_service_token(),
    )
    return create_app(profile=resolved, secrets=secrets, transport=DryRunTransport()), resolved


def _check_server_url(value: str) -> str:
    refusal = CliUsageError("--server-url must be an http or https URL.")
    if has_ascii_control_or_space(value) or "\\" in value:
        raise refusal
    url = _web_url(value, ("http", "https"), refusal)
    return str(url.copy_with(query=None, fragment=None))


@click.command()
@click.option("--config", "config_path", required=True, metavar="PATH")
@click.option("--profile", metavar="NAME")
@click.option("--server-url", metavar="URL", help="servers[0].url (http/https).")
@click.option("--out", metavar="FILE", help="Write to a new file instead of stdout.")
def openapi(config_path: str, profile: str | None, server_url: str | None, out: str | None) -> None:
    """Print the service's OpenAPI 3.1 document (JSON)."""
    from ._inputs import check_out_path, write_exclusive

    server = _check_server_url(server_url) if server_url is not None else None
    target = check_out_path(out) if out is not None else None
    from ..http import openapi_document

    app, _ = _offline_app(config_path, profile)
    text = json.dumps(openapi_document(app, server_url=server), indent=2) + "\n"
    if target is None:
        click.echo(text, nl=False)
        return
    write_exclusive(target, text.encode("utf-8"))
    paths = len(json.loads(text).get("paths", {}))
    click.echo(f"openapi: wrote 1 file ({paths} paths).", err=True)


# --- doctor -------------------------------------------------------------------------------------

_IMPORTS: Final = (
    "trio",
    "anyio",
    "httpx",
    "cryptography",
    "prometheus_client",
    "click",
    "pydantic",
    "yaml",
    "quart_trio",
    "quart_schema",
    "hypercorn",
    "dotenv",
)


@dataclass(frozen=True, slots=True)
class _Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None

    @classmethod
    def refused(cls, name: str, error: CliError, fix: str) -> _Check:
        """A check failed by the tool's own refusal: its safe message is the detail."""
        return cls(name, False, error.format_message(), fix)

    def json(self) -> dict[str, object]:
        body: dict[str, object] = {"name": self.name, "ok": self.ok, "detail": self.detail}
        if self.fix is not None:
            body["fix"] = self.fix
        return body


def _version_drift() -> _Check:
    from importlib import metadata

    from packaging.requirements import Requirement

    try:
        requirements = metadata.requires("svc") or []
    except metadata.PackageNotFoundError:
        return _Check(
            "versions",
            False,
            "svc is not installed as a package.",
            "pip install -e . (or pip install svc)",
        )
    drift: list[str] = []
    checked = 0
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        checked += 1
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            drift.append(f"{requirement.name} missing")
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            drift.append(f"{requirement.name} {installed} not {requirement.specifier}")
    if drift:
        return _Check("versions", False, "; ".join(drift), "svc upgrade")
    return _Check("versions", True, f"{checked} dependencies within their declared ranges")


def _doctor_checks(
    config_path: str, profile: str | None, check_env: bool, env_file: str | None = None
) -> list[_Check]:
    """The checks in order; a config or profile that does not load ends the list there."""
    import os

    checks = [_runtime_check(), _imports_check(), _version_drift()]
    from ._config import load_config, resolve_profile

    try:
        loaded = load_config(config_path)
    except CliError as exc:
        checks.append(
            _Check.refused("config", exc, "fix the file, or create one with `svc init DIR`")
        )
        return checks
    checks.append(_Check("config", True, f"{len(loaded.profile_names)} profile(s)"))
    try:
        resolved = resolve_profile(loaded, profile, os.environ, placeholders=True)
    except CliError as exc:
        checks.append(
            _Check.refused("profile", exc, "pass --profile with a name from the file's profiles")
        )
        return checks
    checks.append(_Check("profile", True, f"profile {resolved.name}"))
    checks.append(_routes_check(resolved))
    checks.append(_openapi_check(config_path, profile))
    if check_env:
        checks.append(_env_check(loaded, profile, env_file))
    return checks


def _runtime_check() -> _Check:
    """Python 3.11 or newer."""
    import platform

    ok_runtime = sys.version_info >= (3, 11)
    return _Check(
        "runtime",
        ok_runtime,
        f"Python {platform.python_version()}",
        None if ok_runtime else "use Python 3.11 or newer",
    )


def _imports_check() -> _Check:
    """Every runtime dependency imports."""
    import importlib

    missing = []
    for name in _IMPORTS:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return _Check(
        "imports",
        not missing,
        f"{len(_IMPORTS) - len(missing)}/{len(_IMPORTS)} packages import"
        + (f"; missing: {', '.join(missing)}" if missing else ""),
        "pip install -e . (reinstall svc with its dependencies)" if missing else None,
    )


def _routes_check(resolved: Profile) -> _Check:
    """The profile's route inventory (group routes off) is not empty."""
    from ..http import route_inventory

    routes = route_inventory(resolved, enable_group_routes=False)
    lines = sum(len(route.lines()) for route in routes)
    return _Check("routes", lines > 0, f"{lines} method/path pairs")


def _openapi_check(config_path: str, profile: str | None) -> _Check:
    """The offline app of the profile builds an OpenAPI 3.1 document; any failure is a failed
    check, named by its type only."""
    from ..http import openapi_document

    try:
        app, _ = _offline_app(config_path, profile)
        document = openapi_document(app)
        version = str(document.get("openapi", ""))
        ok = version.startswith("3.1")
        return _Check(
            "openapi",
            ok,
            f"OpenAPI {version}, {len(document.get('paths', {}))} paths",
            None if ok else "reinstall svc (quart-schema version drift)",
        )
    except Exception as exc:  # noqa: BLE001 - any failure here is a failed check, reported safely
        return _Check(
            "openapi",
            False,
            f"document not built ({type(exc).__name__})",
            "run `svc doctor` after `svc upgrade`; report a bug if it persists",
        )


def _env_check(loaded: Any, profile: str | None, env_file: str | None) -> _Check:
    """Every env name the profile references, checked at once; names only, never values."""
    import os

    from ._config import read_env_file, resolve_profile, resolve_secrets

    fix = "export the named variables or add them to --env-file (values are never shown)"
    try:
        environ = read_env_file(env_file, os.environ) if env_file is not None else os.environ
        _, section = loaded.section(profile)
        missing = [name for name in loaded.env_references(profile) if not environ.get(name)]
        if missing:
            return _Check("env", False, f"not set: {', '.join(missing)}.", fix)
        resolve_secrets(section, environ)
        resolve_profile(loaded, profile, environ, placeholders=False)
        if section.inbox is not None:
            from ._inbox_keys import resolve_inbox_keys

            resolve_inbox_keys(section, environ)
        return _Check("env", True, "every referenced variable is set and resolves")
    except CliError as exc:
        return _Check.refused("env", exc, fix)


@click.command()
@click.option("--config", "config_path", required=True, metavar="PATH")
@click.option("--profile", metavar="NAME")
@click.option("--check-env", is_flag=True, help="Also check the referenced env names are set.")
@click.option("--env-file", metavar="FILE", help="Relative dotenv file read by --check-env.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def doctor(
    config_path: str, profile: str | None, check_env: bool, env_file: str | None, fmt: str
) -> None:
    """Offline checks: runtime, imports, versions, config, profile, routes, OpenAPI."""
    if env_file is not None and not check_env:
        raise CliUsageError("--env-file is read by --check-env: give both.")
    checks = _doctor_checks(config_path, profile, check_env, env_file)
    failed = [check for check in checks if not check.ok]
    summary = f"{len(checks)} checks, {len(checks) - len(failed)} passed, {len(failed)} failed"
    if fmt == "json":
        click.echo(
            json.dumps(
                {"ok": not failed, "summary": summary, "checks": [c.json() for c in checks]},
                indent=2,
            )
        )
    else:
        for check in checks:
            click.echo(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
            if check.fix is not None:
                click.echo(f"     fix: {check.fix}")
        click.echo(f"doctor: {summary}")
    if failed:
        raise DoctorError(f"{len(failed)} check(s) failed.")


# --- upgrade ------------------------------------------------------------------------------------


def upgrade_command() -> list[str]:
    """``pip install --upgrade`` of svc and the extras installed beside it."""
    from importlib import metadata

    package = "svc"
    try:
        metadata.version("psycopg")
        package = "svc[postgres]"
    except metadata.PackageNotFoundError:
        pass
    return [sys.executable, "-m", "pip", "install", "--upgrade", package]


@click.command()
@click.option("--dry-run", is_flag=True, help="Print the command only.")
def upgrade(dry_run: bool) -> None:
    """Upgrade the installed svc package set with pip."""
    import shlex
    import subprocess

    command = upgrade_command()
    click.echo(shlex.join(command))
    if dry_run:
        return
    completed = subprocess.run(command, check=False)  # noqa: S603 - fixed argument list
    if completed.returncode != 0:
        raise CliError(f"pip exited with {completed.returncode}.")
