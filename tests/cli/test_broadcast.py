"""``svc broadcast send|status`` against a running dry-run service; recipients are never printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import svc.http  # noqa: F401 - the first Quart import is paid at collection
from svc.cli import cli
from svc.cli._broadcast import read_recipients
from svc.cli._errors import CliUsageError
from tests._support import ServeProcess, run_svc, start_serve

pytestmark = pytest.mark.slow

CSV = (
    "to,name,code\n15551230001,Ann,A1\n15551230002,Bob,B2\n15551230001,Ann,A1\n15551230003,Cy,C3\n"
)


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"SVC_SERVICE_TOKEN": None})


def test_send_waits_for_the_summary_and_status_reads_it(
    project: Path, serving: list[ServeProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    config = str(project / "svc.config.yaml")
    served = start_serve(
        "--config", config, "--dry-run", "--database", str(project / "svc.db"), "--port", "0"
    )
    serving.append(served)
    token = served.secrets["serviceBearerToken"]
    (project / ".env.test").write_text(f"SVC_SERVICE_TOKEN={token}\n")
    (project / "people.csv").write_text(CSV)
    common = ["--config", config, "--env-file", ".env.test", "--url", served.url]
    args = ["broadcast", "send", *common, "--template", "promo", "--language", "en"]
    args += ["--recipients", "people.csv", "--param-column", "name", "--param-column", "code"]
    sent = _invoke(*args)
    assert sent.exit_code == 0, sent.output
    lines = sent.output.splitlines()
    assert lines[0].startswith("broadcast ") and lines[0].endswith(": done")
    assert lines[-1] == "sent 3, failed 0, skipped 1, queued 0"
    for secret in ("15551230001", "Ann", "A1", token):
        assert secret not in sent.output
    broadcast_id = lines[0].split()[1].rstrip(":")

    # The same command again is the same broadcast (its key comes from the file): no resend.
    again = _invoke(*args, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["broadcastIds"] == [broadcast_id]

    status = run_svc("broadcast", "status", broadcast_id, *common, cwd=project)
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines() == [
        f"broadcast {broadcast_id}: done",
        "sent 3, failed 0, skipped 1, queued 0",
    ]
    unknown = _invoke("broadcast", "status", "nope", *common)
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("Error: the service answered 404 (not_found): ")
    assert unknown.stderr != "Error: the service answered 404 (not_found).\n"


def test_read_recipients_builds_body_parameters_and_names_lines_not_values() -> None:
    recipients = read_recipients(CSV.encode(), to_column="to", param_columns=("name",))
    assert recipients[0] == {
        "to": "15551230001",
        "components": [{"type": "body", "parameters": [{"type": "text", "text": "Ann"}]}],
    }
    assert len(recipients) == 4  # the repeat is the service's to skip
    with pytest.raises(CliUsageError, match="no column named 'phone'"):
        read_recipients(CSV.encode(), to_column="phone", param_columns=())
    with pytest.raises(CliUsageError, match="line 4") as info:
        read_recipients(b"to\n1555\n\n ,x\n", to_column="to", param_columns=())
    assert "1555" not in str(info.value)


def test_a_csv_the_reader_refuses_is_a_usage_error_naming_its_line() -> None:
    huge = b"to\n15551230001\n" + b"1" * 200_000 + b"\n"
    with pytest.raises(CliUsageError) as info:
        read_recipients(huge, to_column="to", param_columns=())
    assert info.value.format_message() == "line 3: the CSV cannot be read."
