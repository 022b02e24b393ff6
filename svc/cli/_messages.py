"""``svc messages list|show``: read the running service's message projection.

The bearer is the profile's ``serviceBearerToken`` env reference, read from
``--env-file`` (optional) and the process environment; it travels only in the
``Authorization`` header and is never printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping
from typing import Any, Final

import click

from svc._text import is_printable_ascii

from ._errors import CliUsageError, MessagesError

__all__ = ["COLUMNS", "messages"]

COLUMNS: Final = (
    "createdAt",
    "direction",
    "waMessageId",
    "type",
    "status",
    "from",
    "to",
    "user",
)
_FIELDS: Final = {"from": "fromPhone", "to": "toPhone"}


def _column(item: Mapping[str, Any], column: str) -> object:
    """A row's cell: ``user`` is its BSUID, else its parent BSUID (empty for phone-only rows)."""
    if column == "user":
        return item.get("userId") or item.get("parentUserId")
    return item.get(_FIELDS.get(column, column))


def _options(function: Any) -> Any:
    for decorator in reversed(
        [
            click.option("--config", "config_path", required=True, metavar="PATH"),
            click.option("--profile", metavar="NAME"),
            click.option("--env-file", metavar="FILE", help="Relative dotenv file with the token."),
            click.option("--url", metavar="URL", help="Service URL (default: the config's)."),
            click.option("--json", "as_json", is_flag=True, help="Print the raw JSON."),
        ]
    ):
        function = decorator(function)
    return function


@click.group()
def messages() -> None:
    """Read the message projection of the running local service."""


def _call(
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    path: str,
    query: Mapping[str, str],
) -> Any:
    import httpx

    from ._config import load_config, resolve_profile
    from ._inputs import check_env_file_name, read_dotenv

    loaded = load_config(config_path)
    environ: dict[str, str] = {}
    if env_file is not None:
        env_path = check_env_file_name(env_file)
        if not env_path.is_file():
            raise MessagesError("the env file does not exist or is not a file.")
        environ.update(read_dotenv(env_path))
    environ.update(os.environ)
    resolved = resolve_profile(loaded, profile, environ, placeholders=True)
    _, section = loaded.section(profile)
    token_name = section.secrets.serviceBearerToken.env
    token = environ.get(token_name)
    if not token:
        raise MessagesError(f"{token_name} is not set (env file or environment).")
    base = url if url is not None else _default_url(resolved.host, resolved.port)
    try:
        parsed = httpx.URL(base)
    except httpx.InvalidURL:
        raise CliUsageError("--url must be an http(s) URL.") from None
    if parsed.scheme not in ("http", "https") or not parsed.host or parsed.userinfo:
        raise CliUsageError("--url must be an http(s) URL without credentials.")
    target = base.rstrip("/") + resolved.api_prefix + path
    try:
        with httpx.Client(timeout=10.0) as client:
            response = client.get(
                target, params=dict(query), headers={"Authorization": f"Bearer {token}"}
            )
    except httpx.HTTPError:
        raise MessagesError("the service cannot be reached (is `svc serve` running?).") from None
    if response.status_code != 200:
        code = "unknown"
        with contextlib.suppress(ValueError, KeyError, TypeError):
            code = str(response.json()["error"]["code"])
        if not code.replace("_", "").isalnum():
            code = "unknown"
        raise MessagesError(f"the service answered {response.status_code} ({code}).")
    try:
        return response.json()
    except ValueError:
        raise MessagesError("the service answered with something that is not JSON.") from None


def _default_url(host: str, port: int) -> str:
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - a listen-all address, reached locally
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("\t", " ").replace("\n", " ")


def _status_summary(items: list[Mapping[str, Any]]) -> None:
    if os.environ.get("SVC_CLI_STATUS_UI") != "1" or not sys.stderr.isatty():
        return
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item.get("status"))] = counts.get(str(item.get("status")), 0) + 1
    summary = ", ".join(f"{status} {count}" for status, count in sorted(counts.items()))
    click.echo(f"status: {summary or 'no messages'}", err=True)


@messages.command(name="list")
@_options
@click.option("--limit", default="50", metavar="N", help="Page size 1..100 (default 50).")
@click.option("--cursor", metavar="ROW_ID", help="Continue after this row id.")
@click.option(
    "--user",
    metavar="ID",
    help="Only this user's messages: a phone number, a BSUID or a parent BSUID.",
)
def list_messages(
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    as_json: bool,
    limit: str,
    cursor: str | None,
    user: str | None,
) -> None:
    """One tab-separated line per message; the next cursor goes to stderr.

    ``--user`` keeps the rows of one user, whichever identifier (phone, BSUID,
    parent BSUID) names it once the service has linked them.
    """
    from svc.graph import is_phone_number, is_user_id

    from ._inputs import parse_int

    query = {"limit": str(parse_int(limit, "--limit", low=1, high=100))}
    if cursor is not None:
        if not cursor or not is_printable_ascii(cursor) or len(cursor) > 256:
            raise CliUsageError("--cursor must be a row id from a previous page.")
        query["cursor"] = cursor
    if user is not None:
        if not (is_phone_number(user) or is_user_id(user)):
            raise CliUsageError(
                "--user must be a phone number (digits), a BSUID (US.1234...) or a parent BSUID."
            )
        query["user"] = user
    page = _call(config_path, profile, env_file, url, "/messages", query)
    if as_json:
        click.echo(json.dumps(page, ensure_ascii=False))
        return
    items = page.get("items", []) if isinstance(page, dict) else []
    click.echo("\t".join(COLUMNS))
    for item in items:
        click.echo("\t".join(_cell(_column(item, c)) for c in COLUMNS))
    next_cursor = page.get("nextCursor") if isinstance(page, dict) else None
    if next_cursor:
        click.echo(f"next cursor: {next_cursor}", err=True)
    _status_summary(items)


@messages.command(name="show")
@click.argument("message_id", metavar="MESSAGE_ID")
@_options
def show_message(
    message_id: str,
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """One ``key: value`` line per field of one message (its waMessageId)."""
    from urllib.parse import quote

    if not message_id or len(message_id) > 256 or not message_id.isprintable() or "/" in message_id:
        raise CliUsageError("MESSAGE_ID must be a message id (no '/', no control characters).")
    record = _call(
        config_path, profile, env_file, url, "/messages/" + quote(message_id, safe=""), {}
    )
    if as_json:
        click.echo(json.dumps(record, ensure_ascii=False))
        return
    if isinstance(record, dict):
        for key, value in record.items():
            click.echo(f"{key}: {_cell(value)}")
    if isinstance(record, dict):
        _status_summary([record])
