"""``svc serve --app``: the user's handlers in the served service, as real processes.

A bot module in the working folder replies to a text through its context; the
reply is logged by message id (never text), recorded as an outbound row, and
the same holds with ``--workers 2``. With a store the inbox keys are resolved
before binding: generated and printed in a dry run, refused by name when live.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc.crypto import generate_inbox_key
from tests._support import (
    Captured,
    ServeProcess,
    make_project,
    run_svc,
    sign,
    start_serve,
)

pytestmark = pytest.mark.slow

BOT = """\
from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate

bot = DefaultFacade()


@bot.on("message", context=True)
async def reply(ctx: HandlerContext) -> None:
    if isinstance(ctx.update, MessageUpdate) and ctx.update.text is not None:
        await ctx.reply_text(f"You said: {ctx.update.text}", quote=True)
"""
PHONE_ID = "106540352242922"
USER = "16505551234"
TEXT = "where is my parcel?"
REPLY_LINE = re.compile(r"^handler reply sent type=text message_id=(wamid\.DRYRUN\.\S+)$")


def delivery(message_id: str) -> bytes:
    """One inbound text to the dry run's placeholder number."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "contacts": [{"profile": {"name": "Kerry"}, "wa_id": USER}],
        "messages": [
            {
                "from": USER,
                "id": message_id,
                "timestamp": "1749416383",
                "type": "text",
                "text": {"body": TEXT},
            }
        ],
    }
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "102290129340398", "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(envelope).encode()


def post(served: ServeProcess, body: bytes) -> dict[str, Any]:
    answer = httpx.post(
        served.url + "/webhooks/whatsapp",
        content=body,
        headers={
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(body=body, secret=served.app_secret),
        },
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = run_svc("init", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    (tmp_path / "bot.py").write_text(BOT)
    return tmp_path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bot_served_with_app_replies_and_the_log_shows_the_reply_id(
    folder: Path, serving: list[ServeProcess], workers: str
) -> None:
    capture = Captured()
    served = start_serve(
        *("--config", "demo/svc.config.yaml", "--dry-run", "--database", "demo/svc.db"),
        *("--app", "bot:bot", "--workers", workers, "--port", "0"),
        cwd=folder,
        capture=capture,
    )
    serving.append(served)
    assert re.search(r"\(dry run, store sqlite(, 2 workers)?, app bot:bot\)", served.lines[-1])
    assert "inboxKey" in served.secrets  # generated, printed once, then scanned for
    assert any("key_unavailable dead letters" in line for line in served.lines)
    count = 4 if workers == "2" else 1
    for index in range(count):
        answer = post(served, delivery(f"wamid.IN{index}"))
        assert answer == {
            "status": "ok",
            "received": 1,
            "dispatched": 1,
            "skipped": 0,
            "queued": 1,
        }
    replies = [served.wait_for_line(REPLY_LINE).group(1) for _ in range(count)]
    assert len(set(replies)) == count
    with served.client() as client:
        for reply in replies:
            row = client.get(f"/api/messages/{reply}")
            assert row.status_code == 200
            assert row.json()["direction"] == "outbound"
        # A copy of a recorded delivery runs no handler again.
        assert post(served, delivery("wamid.IN0"))["dispatched"] == 0
    assert served.stop() == 0
    text = "\n".join(served.lines)
    assert TEXT not in text and USER not in text
    assert capture.leaks() == []


def test_a_dry_run_takes_the_inbox_key_from_the_environment_and_never_prints_it(
    folder: Path, serving: list[ServeProcess]
) -> None:
    key = generate_inbox_key()
    served = start_serve(
        *("--config", "demo/svc.config.yaml", "--dry-run", "--database", "demo/svc.db"),
        *("--app", "bot:bot", "--port", "0"),
        cwd=folder,
        env={"SVC_INBOX_KEY": key},
    )
    serving.append(served)
    assert "dry-run inbox keys from the environment: SVC_INBOX_KEY" in served.lines
    assert "inboxKey" not in served.secrets
    assert served.stop() == 0
    assert key not in "\n".join(served.lines) + served.stdout


def test_without_a_store_no_inbox_key_is_made(folder: Path, serving: list[ServeProcess]) -> None:
    served = start_serve(
        "--config", "demo/svc.config.yaml", "--dry-run", "--app", "bot:bot", "--port", "0",
        cwd=folder,
    )  # fmt: skip
    serving.append(served)
    assert not any("inbox" in line for line in served.lines)
    # The start-up line docs/handlers.md quotes: a crash loses what memory held.
    page = (Path(__file__).resolve().parents[2] / "docs" / "handlers.md").read_text()
    [documented] = re.findall(r"^svc: handlers run after the answer from memory.*$", page, re.M)
    assert documented in served.lines
    assert post(served, delivery("wamid.NOSTORE"))["dispatched"] == 1
    served.wait_for_line(REPLY_LINE)
    assert served.stop() == 0


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--handler-concurrency", "0"),
        ("--handler-timeout", "soon"),
        ("--handler-max-attempts", "101"),
        ("--handler-max-waiting", "-1"),
    ],
)
def test_handler_options_out_of_range_are_usage_errors(
    folder: Path, option: str, value: str
) -> None:
    result = run_svc(
        "serve", "--config", "demo/svc.config.yaml", "--dry-run", "--app", "bot:bot",
        option, value, cwd=folder,
    )  # fmt: skip
    assert result.returncode == 1
    assert f"{option} must be an integer" in result.stderr


def test_the_echo_reply_shows_its_message_id_in_the_log(
    folder: Path, serving: list[ServeProcess]
) -> None:
    served = start_serve(
        *("--config", "demo/svc.config.yaml", "--dry-run", "--database", "demo/svc.db"),
        "--port",
        "0",
        cwd=folder,
        env={"SVC_ECHO_REPLY": "1", "SVC_LOG_WEBHOOK_EVENTS": "1"},
    )
    serving.append(served)
    assert post(served, delivery("wamid.ECHO1"))["dispatched"] == 1
    served.wait_for_line(re.compile(r"^webhook update kind=message detail=text$"))
    reply = served.wait_for_line(REPLY_LINE).group(1)
    with served.client() as client:
        assert client.get(f"/api/messages/{reply}").json()["direction"] == "outbound"
        metrics = client.get("/metrics").text
    assert 'graph_operations_total{endpoint_family="messages",outcome="success"' in metrics
    assert served.stop() == 0
    assert TEXT not in "\n".join(served.lines)


@pytest.mark.parametrize("store", [True, False], ids=["store", "no-store"])
def test_without_app_a_new_message_is_dispatched_and_queued_for_no_handler(
    folder: Path, serving: list[ServeProcess], store: bool
) -> None:
    """The counters of docs/http.md, "Webhook", from the served service without ``--app``."""
    database = ("--database", "demo/svc.db") if store else ()
    served = start_serve(
        "--config", "demo/svc.config.yaml", "--dry-run", *database, "--port", "0", cwd=folder,
    )  # fmt: skip
    serving.append(served)
    new = {"status": "ok", "received": 1, "dispatched": 1, "skipped": 0, "queued": 0}
    duplicate = {"status": "ok", "received": 1, "dispatched": 0, "skipped": 1, "queued": 0}
    assert post(served, delivery("wamid.NEW1")) == new
    assert post(served, delivery("wamid.NEW1")) == (duplicate if store else new)
    foreign = delivery("wamid.F1").replace(PHONE_ID.encode(), b"100000000000001")
    assert post(served, foreign) == duplicate  # set apart: not dispatched
    assert served.stop() == 0


def test_a_foreign_number_is_named_once_in_the_log(
    folder: Path, serving: list[ServeProcess]
) -> None:
    served = start_serve(
        "--config", "demo/svc.config.yaml", "--dry-run", "--port", "0", cwd=folder,
    )  # fmt: skip
    serving.append(served)
    foreign = delivery("wamid.F1").replace(PHONE_ID.encode(), b"100000000000001")
    assert post(served, foreign)["skipped"] == 1
    assert post(served, foreign.replace(b"wamid.F1", b"wamid.F2"))["skipped"] == 1
    served.wait_for_line(
        re.compile(
            r"^webhook updates skipped reason=foreign_number phone_number_id=100000000000001: "
            rf"not a number this service serves \({PHONE_ID}\); logged once per id$"
        )
    )
    assert served.stop() == 0
    assert sum("foreign_number" in line for line in served.lines) == 1


def test_live_serve_with_handlers_and_a_store_refuses_to_start_without_the_inbox_key(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, inbox_key=False)
    (tmp_path / "bot.py").write_text(BOT)
    live = ("--live", "--yes-live", "--env-file", project.env_file, "--database", "svc.db")
    args = ("serve", "--config", "svc.config.json", *live, "--app", "bot:bot", "--port", "0")
    # The profile names no inbox key: the refusal says how to add one.
    result = run_svc(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert "the profile needs inbox: {keys: [{env: SVC_INBOX_KEY}]}" in result.stderr
    assert "svc: serving" not in result.stderr
    config = json.loads((tmp_path / "svc.config.json").read_text())
    config["profiles"]["main"]["inbox"] = {"keys": [{"env": "SVC_INBOX_KEY"}]}
    (tmp_path / "svc.config.json").write_text(json.dumps(config))
    result = run_svc(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: SVC_INBOX_KEY is not set (an inbox key)."
    )
    assert not (tmp_path / "svc.db").exists()  # refused before the store was opened
    for value in project.secrets.values():
        assert value not in result.stderr + result.stdout


def test_the_start_up_line_reads_the_runtime_s_own_defaults() -> None:
    """The handler runtime's line names what it will run with: the settings given, and the
    runtime's own defaults (``HandlerOptions``) for the rest, never a copy of them."""
    from svc.cli._runtime import ServePlan, _handlers_line
    from svc.runtime import HandlerOptions

    plan = ServePlan(
        profile_fields={},
        secrets=("t", "v", "s", "b"),
        dry_run=True,
        app="bot:bot",
        handler_options={"concurrency": 3, "max_attempts": 2},
    )
    line = _handlers_line(plan)
    assert line is not None
    timeout = HandlerOptions().timeout
    assert f"(3 at once, {timeout:g} s deadline, 2 attempts)" in line
