"""``svc messages list|show`` against a running dry-run service; the bearer is never printed."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

import svc.http  # noqa: F401 - the first Quart import is paid at collection
from svc.cli import cli
from tests._support import ServeProcess, run_svc, start_serve

pytestmark = pytest.mark.slow

HEADER = "createdAt\tdirection\twaMessageId\ttype\tstatus\tfrom\tto\tuser"
BSUID = "US.13491208655302741918"


def _invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """In-process run (fast); the subprocess runs below cover the real exits."""
    return CliRunner().invoke(cli, list(args), env={"SVC_SERVICE_TOKEN": None, **(env or {})})


def test_messages_list_and_show_read_the_running_service(
    project: Path, serving: list[ServeProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    config = str(project / "svc.config.yaml")
    served = start_serve(
        "--config", config, "--dry-run", "--database", str(project / "svc.db"), "--port", "0"
    )
    serving.append(served)
    token = served.secrets["serviceBearerToken"]
    ids = []
    for text in ("one", "two", "three"):
        answer = httpx.post(
            served.url + "/api/messages/text",
            json={"to": "15551234567", "text": text},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        ids.append(answer.json()["messages"][0]["id"])
    # The token comes from the env file; --url points at the ephemeral port.
    (project / ".env.test").write_text(f"SVC_SERVICE_TOKEN={token}\n")
    common = ["--config", config, "--env-file", ".env.test", "--url", served.url]
    page = run_svc("messages", "list", *common, "--limit", "2", cwd=project)
    assert page.returncode == 0, page.stderr
    lines = page.stdout.splitlines()
    assert lines[0] == HEADER
    assert len(lines) == 3
    row = lines[1].split("\t")
    assert row[1:5] == ["outbound", row[2], "text", "sent"]
    assert row[2] in ids
    assert row[6] == "15551234567"
    cursor_line = page.stderr.strip()
    assert cursor_line.startswith("next cursor: ")
    rest = run_svc(
        "messages",
        "list",
        *common,
        "--cursor",
        cursor_line.removeprefix("next cursor: "),
        cwd=project,
    )
    assert rest.returncode == 0
    assert len(rest.stdout.splitlines()) == 2
    assert rest.stderr == ""
    seen = {line.split("\t")[2] for line in lines[1:] + rest.stdout.splitlines()[1:]}
    assert seen == set(ids)
    # A send to a BSUID is listed by that BSUID (its "user" column), not by the phone.
    to_bsuid = httpx.post(
        served.url + "/api/messages/text",
        json={"to": BSUID, "text": "four"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert to_bsuid.status_code == 200
    by_user = _invoke("messages", "list", *common, "--user", BSUID)
    assert by_user.exit_code == 0, by_user.stderr
    [bsuid_row] = [line.split("\t") for line in by_user.stdout.splitlines()[1:]]
    assert bsuid_row[1:] == ["outbound", bsuid_row[2], "text", "sent", "", "", BSUID]
    assert bsuid_row[2] == to_bsuid.json()["messages"][0]["id"]
    by_phone = _invoke("messages", "list", *common, "--user", "+15551234567")
    assert len(by_phone.stdout.splitlines()) == 4
    shown = _invoke("messages", "show", ids[0], *common)
    assert shown.exit_code == 0
    assert f"waMessageId: {ids[0]}" in shown.stdout.splitlines()
    assert "status: sent" in shown.stdout.splitlines()
    raw = _invoke("messages", "show", ids[0], *common, "--json")
    assert raw.exit_code == 0
    assert raw.stdout.startswith("{")
    missing = _invoke("messages", "show", "wamid.NOPE", *common)
    assert missing.exit_code == 1
    assert missing.stderr.startswith("Error: the service answered 404 (not_found): ")
    nonsense = _invoke("messages", "list", *common, "--cursor", "nonsense")
    assert nonsense.exit_code == 1
    assert nonsense.stderr == (
        "Error: the service answered 400 (malformed_query): 'cursor' names no stored message "
        "(mistyped, or removed since): use nextCursor of the previous page, or start again "
        "without a cursor.\n"
    )
    wrong = run_svc(
        "messages",
        "list",
        "--config",
        config,
        "--url",
        served.url,
        cwd=project,
        env={"SVC_SERVICE_TOKEN": "wrong-token-value"},
    )
    assert wrong.returncode == 1
    assert "401" in wrong.stderr
    assert served.stop(signal.SIGINT) == 0
    down = _invoke("messages", "list", *common)
    assert down.exit_code == 1
    assert "cannot be reached" in down.stderr
    for result in (page, rest, shown, raw, missing, wrong, down):
        assert token not in result.stdout + result.stderr
        assert "wrong-token-value" not in result.stdout + result.stderr


def test_messages_without_a_token_exit_1(project: Path) -> None:
    result = run_svc("messages", "list", "--config", str(project / "svc.config.yaml"))
    assert result.returncode == 1
    assert result.stderr == "Error: SVC_SERVICE_TOKEN is not set (env file or environment).\n"


@pytest.mark.parametrize("user", ["", "abc", "us.1", "US.1.2", "1-2"])
def test_messages_list_refuses_a_bad_user_before_calling(project: Path, user: str) -> None:
    result = _invoke(
        "messages",
        "list",
        "--config",
        str(project / "svc.config.yaml"),
        "--user",
        user,
        env={"SVC_SERVICE_TOKEN": "t"},
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --user must be a phone number (digits), a BSUID (US.1234...) or a parent BSUID.\n"
    )


def test_a_url_whose_host_cannot_be_looked_up_says_the_service_cannot_be_reached(
    project: Path,
) -> None:
    """A label past 63 characters fails in the IDNA codec, before any lookup."""
    url = "http://" + "a" * 300 + ".example"
    config = str(project / "svc.config.yaml")
    for args in (["messages", "list"], ["broadcast", "status", "b1"]):
        result = _invoke(*args, "--config", config, "--url", url, env={"SVC_SERVICE_TOKEN": "t"})
        assert result.exit_code == 1
        assert result.stderr == "Error: the service cannot be reached (is `svc serve` running?).\n"
