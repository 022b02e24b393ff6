"""``svc broadcast send|status``: send a template to a CSV of recipients through a running service.

``send`` reads the CSV (a header row; the recipient column and the template's
body parameter columns by name), posts one broadcast per 5,000 recipients to
``POST {prefix}/broadcasts`` with an ``Idempotency-Key`` derived from the
file, template and language (running the same command twice sends nobody
twice), then follows the counts: a progress line on a terminal, a summary at
the end. Recipients and parameter values are never printed. The bearer is read
as ``svc messages`` reads it.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import click

from ._errors import CliUsageError
from ._local_service import SERVICE_OPTIONS, LocalService

__all__ = ["broadcast", "read_recipients"]

CHUNK: Final = 5000
"""Recipients per broadcast (the service's limit per request)."""
MAX_FILE_BYTES: Final = 50 * 1024 * 1024
POLL_SECONDS: Final = 1.0


def _options(function: Any) -> Any:
    for decorator in reversed(
        [
            click.option("--config", "config_path", required=True, metavar="PATH"),
            *SERVICE_OPTIONS,
        ]
    ):
        function = decorator(function)
    return function


@click.group()
def broadcast() -> None:
    """Paced broadcasts through the running local service."""


def read_recipients(
    data: bytes, *, to_column: str, param_columns: Sequence[str]
) -> list[dict[str, Any]]:
    """The broadcast recipients of a CSV file: ``to`` and, with parameter columns, the
    template's body parameters in column order. Errors name a line, never a value."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliUsageError("--recipients must be a UTF-8 CSV file.") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        return _recipients(reader, to_column=to_column, param_columns=param_columns)
    except csv.Error:  # a field past the reader's limit, a quote left open
        raise CliUsageError(f"line {reader.reader.line_num}: the CSV cannot be read.") from None


def _recipients(
    reader: csv.DictReader[str], *, to_column: str, param_columns: Sequence[str]
) -> list[dict[str, Any]]:
    header = reader.fieldnames or []
    for column in (to_column, *param_columns):
        if column not in header:
            raise CliUsageError(f"the CSV has no column named {column!r}.")
    recipients: list[dict[str, Any]] = []
    for row in reader:
        to = (row.get(to_column) or "").strip()
        if not to:
            raise CliUsageError(f"line {reader.line_num}: the recipient is empty.")
        recipient: dict[str, Any] = {"to": to}
        if param_columns:
            parameters = [{"type": "text", "text": row.get(c) or ""} for c in param_columns]
            recipient["components"] = [{"type": "body", "parameters": parameters}]
        recipients.append(recipient)
    if not recipients:
        raise CliUsageError("the CSV has no recipients.")
    return recipients


def _summary(statuses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = {"queued": 0, "sent": 0, "failed": 0, "skipped": 0}
    by_code: dict[str, int] = {}
    for status in statuses:
        for key in counts:
            counts[key] += int(status.get("counts", {}).get(key, 0))
        for code, count in dict(status.get("failedByCode", {})).items():
            by_code[str(code)] = by_code.get(str(code), 0) + int(count)
    return {"counts": counts, "failedByCode": dict(sorted(by_code.items()))}


def _summary_line(summary: Mapping[str, Any]) -> str:
    counts = summary["counts"]
    line = (
        f"sent {counts['sent']}, failed {counts['failed']}, skipped {counts['skipped']},"
        f" queued {counts['queued']}"
    )
    if summary["failedByCode"]:
        line += (
            " (failed by code: "
            + ", ".join(f"{code} {count}" for code, count in summary["failedByCode"].items())
            + ")"
        )
    return line


def _progress(summary: Mapping[str, Any], total: int) -> None:
    counts = summary["counts"]
    done = total - counts["queued"]
    width = 30
    filled = width * done // max(1, total)
    bar = "#" * filled + "-" * (width - filled)
    click.echo(f"\r[{bar}] {done}/{total} {_summary_line(summary)}", err=True, nl=False)


def _follow(service: LocalService, ids: Sequence[str], *, show: bool) -> dict[str, Any]:
    """Poll the broadcasts until each is done or paused; return the combined summary."""
    while True:
        statuses = [service.call("GET", f"/broadcasts/{bid}") for bid in ids]
        summary = _summary(statuses)
        total = sum(summary["counts"].values())
        if show:
            _progress(summary, total)
        if all(s.get("state") in ("done", "paused") for s in statuses):
            if show:
                click.echo("", err=True)
            summary["states"] = {s["id"]: s.get("state") for s in statuses}
            return summary
        time.sleep(POLL_SECONDS)


@broadcast.command(name="send")
@_options
@click.option("--template", required=True, metavar="NAME", help="An approved template's name.")
@click.option("--language", required=True, metavar="CODE", help="The template language (en_US).")
@click.option("--recipients", "recipients_path", required=True, metavar="FILE.csv")
@click.option("--to-column", default="to", show_default=True, metavar="NAME")
@click.option(
    "--param-column", "param_columns", multiple=True, metavar="NAME",
    help="A CSV column giving the next body parameter (repeat, in order).",
)  # fmt: skip
@click.option(
    "--phone-number-id", metavar="ID", help="The business number (default: the profile's)."
)
@click.option("--wait/--no-wait", default=True, help="Follow the counts until done (default).")
def send(
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    as_json: bool,
    template: str,
    language: str,
    recipients_path: str,
    to_column: str,
    param_columns: tuple[str, ...],
    phone_number_id: str | None,
    wait: bool,
) -> None:
    """Send TEMPLATE to every recipient of the CSV, paced by the service; print a summary."""
    from svc import crypto

    path = Path(recipients_path)
    if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
        raise CliUsageError("--recipients must be a CSV file of at most 50 MiB.")
    data = path.read_bytes()
    recipients = read_recipients(data, to_column=to_column, param_columns=param_columns)
    message = {"type": "template", "name": template, "languageCode": language}
    seed = crypto.sha256_hex(
        json.dumps([message, phone_number_id, to_column, param_columns]).encode() + data
    )
    with LocalService(config_path, profile, env_file, url, timeout=30.0) as service:
        ids: list[str] = []
        for index, start in enumerate(range(0, len(recipients), CHUNK)):
            body: dict[str, Any] = {
                "message": message,
                "recipients": recipients[start : start + CHUNK],
            }
            if phone_number_id is not None:
                body["phoneNumberId"] = phone_number_id
            answer = service.call(
                "POST", "/broadcasts", body=body,
                headers={"Idempotency-Key": f"cli-{seed[:32]}-{index}"}, ok=(202,),
            )  # fmt: skip
            ids.append(str(answer["broadcastId"]))
        if not wait:
            click.echo(json.dumps({"broadcastIds": ids}) if as_json else "\n".join(ids))
            return
        summary = _follow(service, ids, show=sys.stderr.isatty() and not as_json)
    if as_json:
        click.echo(json.dumps({"broadcastIds": ids, **summary}))
        return
    for bid in ids:
        click.echo(f"broadcast {bid}: {summary['states'][bid]}")
    click.echo(_summary_line(summary))


@broadcast.command(name="status")
@click.argument("broadcast_id", metavar="ID")
@_options
def status(
    broadcast_id: str,
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """The state and counts of one broadcast."""
    from urllib.parse import quote

    if not broadcast_id or len(broadcast_id) > 256 or not broadcast_id.isprintable():
        raise CliUsageError("ID must be a broadcast id.")
    with LocalService(config_path, profile, env_file, url, timeout=30.0) as service:
        record = service.call("GET", "/broadcasts/" + quote(broadcast_id, safe=""))
    if as_json:
        click.echo(json.dumps(record))
        return
    summary = _summary([record])
    click.echo(f"broadcast {record.get('id')}: {record.get('state')}")
    click.echo(_summary_line(summary))
