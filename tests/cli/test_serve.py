"""``svc serve`` as a real process: the README flow, live mode, a drain with a request in flight."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

import svc.http  # noqa: F401 - the first Quart import is paid at collection
from svc.cli import cli
from svc.cli._runtime import DRAIN_SECONDS
from tests._support import FakeGraph, ServeProcess, make_project, run_svc, start_serve

pytestmark = pytest.mark.slow

SIGNAL_LINE = re.compile(r"^svc: SIG(INT|TERM) received")
REPEAT_LINE = re.compile(r"^svc: shutdown already in progress")


def _init_and_serve_dry_run(
    tmp_path: Path, serving: list[ServeProcess], *extra: str
) -> ServeProcess:
    """``svc init bot`` in ``tmp_path``, then ``svc serve --dry-run`` on its config, port 0."""
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    served = start_serve(
        "--config", str(tmp_path / "bot" / "svc.config.yaml"), "--dry-run", *extra, "--port", "0"
    )
    serving.append(served)
    return served


def test_readme_flow_init_then_dry_run_serve_answers_healthz_and_a_text_send(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    served = _init_and_serve_dry_run(
        tmp_path, serving, "--database", str(tmp_path / "bot" / "svc.db")
    )
    dry_lines = [line for line in served.lines if line.startswith("dry-run ")]
    assert [line.split("=")[0] for line in dry_lines] == [
        "dry-run serviceBearerToken",
        "dry-run webhookVerifyToken",
        "dry-run webhookAppSecret",
    ]
    token = served.secrets["serviceBearerToken"]
    assert re.fullmatch(r"svc_st_[A-Za-z0-9_-]{43}", token)
    assert re.fullmatch(r"svc_vt_[A-Za-z0-9_-]{43}", served.secrets["webhookVerifyToken"])
    with httpx.Client(base_url=served.url, timeout=10) as client:
        health = client.get("/healthz")
        sent = client.post(
            "/api/messages/text",
            json={"to": "15551234567", "text": "Hello from svc"},
            headers={"Authorization": f"Bearer {token}"},
        )
        listed = client.get("/api/messages", headers={"Authorization": f"Bearer {token}"})
        refused = client.get("/api/messages", headers={"Authorization": "Bearer wrong"})
    assert health.status_code == 200
    assert health.json()["ok"] is True
    assert sent.status_code == 200
    body = sent.json()
    assert body["dryRun"] is True
    assert body["messages"][0]["id"].startswith("wamid.DRYRUN.")
    assert [item["waMessageId"] for item in listed.json()["items"]] == [body["messages"][0]["id"]]
    assert refused.status_code == 401
    assert served.stop(signal.SIGINT) == 0
    assert served.lines[-1] == "svc: stopped."
    assert (tmp_path / "bot" / "svc.db").is_file()
    # The secrets were printed exactly once, and nowhere else.
    text = "\n".join(served.lines) + served.stdout
    for value in served.secrets.values():
        assert text.count(value) == 1


def _live_project(tmp_path: Path, graph_url: str) -> dict[str, str]:
    """A live project whose second gate is closed in the file, with readable fixed secrets."""
    return make_project(
        tmp_path,
        graph_url,
        secrets={
            "SVC_ACCESS_TOKEN": "EAAGliveAccessToken0123456789",
            "SVC_VERIFY_TOKEN": "live-verify-token-9876",
            "SVC_APP_SECRET": "live-app-secret-abcdef",
            "SVC_SERVICE_TOKEN": "file-service-token-should-lose",
        },
        env_file=".env.local",
        yes_live=False,
    ).secrets


def test_live_sigterm_drains_the_request_in_flight_then_closes_the_store_and_exits_0(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    graph = FakeGraph(message_id=lambda number: f"wamid.SLOW{number}")
    graph.hold()  # each send waits for the test to release it
    closing = contextlib.ExitStack()
    try:
        secrets = _live_project(tmp_path, graph.url)
        env_token = "env-service-token-wins-1234"
        served = start_serve(
            "--config",
            "svc.config.json",
            "--live",
            "--yes-live",
            "--env-file",
            ".env.local",
            "--database",
            "svc.db",
            "--port",
            "0",
            cwd=tmp_path,
            # The process environment wins over the file: the gate and the service token.
            env={"SVC_YES_LIVE": "1", "SVC_SERVICE_TOKEN": env_token},
        )
        serving.append(served)
        answers: list[httpx.Response] = []
        # A pooled keep-alive client that stays open past the answer, as load balancers do.
        client = closing.enter_context(httpx.Client(base_url=served.url, timeout=30))

        def send() -> None:
            answers.append(
                client.post(
                    "/api/messages/text",
                    json={"to": "15551234567", "text": "in flight"},
                    headers={"Authorization": f"Bearer {env_token}"},
                )
            )

        sender = threading.Thread(target=send)
        sender.start()
        graph.wait_for_requests(1)
        served.process.send_signal(signal.SIGTERM)
        served.wait_for_line(SIGNAL_LINE)
        # A second signal joins the shutdown under way.
        served.process.send_signal(signal.SIGTERM)
        served.wait_for_line(REPEAT_LINE)
        # The listener is closed: new connections are refused while the request drains.
        host, port = served.url.removeprefix("http://").rsplit(":", 1)
        # The listener closes asynchronously after the signal: poll, bounded.
        deadline = time.monotonic() + 10
        refused = False
        while not refused and time.monotonic() < deadline:
            try:
                socket.create_connection((host, int(port)), timeout=5).close()
            except ConnectionRefusedError:
                refused = True
            else:
                time.sleep(0.05)
        assert refused
        graph.release()
        sender.join(timeout=30)
        # The answer given during the drain closes its connection, so the open client
        # does not hold the exit to the 10 s drain window.
        assert served.process.wait(timeout=DRAIN_SECONDS - 2) == 0
        served.drain()
    finally:
        graph.release()
        closing.close()
        graph.close()
    assert len(answers) == 1
    assert answers[0].status_code == 200
    assert answers[0].json()["messages"] == [{"id": "wamid.SLOW1"}]
    assert answers[0].headers["connection"] == "close"
    assert [r.authorization for r in graph.requests] == [f"Bearer {secrets['SVC_ACCESS_TOKEN']}"]
    assert served.lines[-1] == "svc: stopped."
    output = "\n".join(served.lines) + served.stdout
    for value in [*secrets.values(), env_token]:
        assert value not in output


def test_a_dry_run_with_live_secrets_and_open_gates_sends_nothing_upstream(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    graph = FakeGraph()
    try:
        project = make_project(tmp_path, graph.url)  # live values, both gates 1, Graph faked
        served = start_serve(
            *("--config", "svc.config.json", "--dry-run", "--env-file", project.env_file),
            *("--database", "svc.db", "--port", "0"),
            cwd=tmp_path,
        )
        serving.append(served)
        headers = {"Authorization": f"Bearer {project.bearer}"}
        with httpx.Client(base_url=served.url, timeout=10, headers=headers) as client:
            text = client.post("/api/messages/text", json={"to": "15551234567", "text": "hi"})
            template = client.post(
                "/api/messages",
                json={"type": "template", "to": "15551234567", "name": "hello_world"}
                | {"languageCode": "en_US"},
            )
        (tmp_path / "people.csv").write_text("to\n15551230001\n15551230002\n")
        sent = run_svc(
            *("broadcast", "send", "--config", "svc.config.json", "--env-file", project.env_file),
            *("--url", served.url, "--template", "promo", "--language", "en"),
            *("--recipients", "people.csv"),
            cwd=tmp_path,
        )
        assert [text.status_code, template.status_code, sent.returncode] == [200, 200, 0]
        assert text.json()["dryRun"] is True and template.json()["dryRun"] is True
        assert sent.stdout.splitlines()[-1] == "sent 2, failed 0, skipped 0, queued 0"
        assert served.stop() == 0
        assert graph.requests == []
    finally:
        graph.close()


def test_live_mode_refuses_without_both_gates(tmp_path: Path) -> None:
    _live_project(tmp_path, "http://127.0.0.1:9")
    result = run_svc(
        "serve",
        "--config",
        "svc.config.json",
        "--live",
        "--yes-live",
        "--env-file",
        ".env.local",
        "--print-routes",
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "SVC_LIVE_ENABLE=1 and SVC_YES_LIVE=1" in result.stderr
    allowed = run_svc(
        "serve",
        "--config",
        "svc.config.json",
        "--live",
        "--yes-live",
        "--env-file",
        ".env.local",
        "--print-routes",
        cwd=tmp_path,
        env={"SVC_YES_LIVE": "1"},
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "POST /api/messages/text" in allowed.stdout.splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--live", "--env-file", ".env.local"], "must be given together"),
        (["--live", "--yes-live"], "must be given together"),
        (["--dry-run", "--live", "--yes-live", "--env-file", ".env.local"], "choose one mode"),
        ([], "choose one mode"),
        (["--live", "--yes-live", "--env-file", "/etc/passwd-secret"], "relative local file"),
        (["--live", "--yes-live", "--env-file", "../up/.env"], "relative local file"),
        (["--dry-run", "--database", "a.db", "--database-url-env", "DB_URL"], "mutually exclusive"),
        (["--dry-run", "--database-url-env", "postgresql://u:pw@h/db"], "env name"),
        (["--dry-run", "--database-url-env", "SVC_NOT_SET_DB"], "SVC_NOT_SET_DB is not set"),
        (["--dry-run", "--port", "70000"], "--port must be an integer 0..65535"),
        (["--dry-run", "--workers", "0"], "--workers must be an integer 1..64"),
        (["--dry-run", "--paas"], "$PORT (with --paas) must be an integer 1..65535"),
        (["--dry-run", "--host", "", "--print-routes"], "--host must be a host name or address"),
        # The ranges docs/cli.md gives, just past each end (--print-routes: no bind if taken).
        *(
            (["--dry-run", "--print-routes", flag, value], f"{flag} must be an integer {bounds}.")
            for flag, bounds, values in (
                ("--body-read-timeout", "1..3600", ("0", "3601")),
                ("--max-worker-restarts", "0..1000", ("-1", "1001")),
                ("--broadcast-rate", "1..1000", ("0", "1001")),
                ("--broadcast-lease", "2..3600", ("1", "3601")),
            )
            for value in values
        ),
        (["--dry-run", "--host", "a\nb", "--print-routes"], "--host must be a host name"),
        # A bind string of another kind is never a host (hypercorn bound every interface).
        *(
            (["--dry-run", "--host", host, "--print-routes"], "--host must be a host name")
            for host in ("fd://3", "fd://", "unix:/tmp/svc.sock", "a/b", "a b", "h@x")
        ),
    ],
)
def test_serve_refusals_exit_1_with_a_safe_message(
    project: Path, args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(
        cli, ["serve", "--config", str(project / "svc.config.yaml"), *args], env={"PORT": None}
    )
    assert result.exit_code == 1
    assert message in result.stderr
    assert "passwd-secret" not in result.stderr
    assert "pw@h" not in result.stderr
    assert result.stdout == ""


def test_a_serve_refusal_exits_1_as_a_process(project: Path) -> None:
    result = run_svc(
        "serve",
        "--config",
        str(project / "svc.config.yaml"),
        "--live",
        "--yes-live",
        "--env-file",
        "/etc/passwd-secret",
    )
    assert result.returncode == 1
    assert "relative local file" in result.stderr
    assert "passwd-secret" not in result.stderr


def test_paas_port_must_be_an_integer_in_range(project: Path) -> None:
    result = run_svc(
        "serve",
        "--config",
        str(project / "svc.config.yaml"),
        "--dry-run",
        "--paas",
        env={"PORT": "http"},
    )
    assert result.returncode == 1
    assert "$PORT (with --paas)" in result.stderr


def test_paas_binds_every_interface_on_port_unless_host_is_given(
    project: Path, serving: list[ServeProcess]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = str(project / "svc.config.yaml")
    served = start_serve("--config", config, "--dry-run", "--paas", env={"PORT": str(port)})
    serving.append(served)
    assert served.url == f"http://0.0.0.0:{port}"
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    assert served.stop() == 0
    given = start_serve(
        *("--config", config, "--dry-run", "--paas", "--host", "127.0.0.1", "--port", "0"),
        env={"PORT": str(port)},
    )
    serving.append(given)
    assert given.url.startswith("http://127.0.0.1:") and given.url != f"http://127.0.0.1:{port}"
    assert given.stop() == 0


def test_print_routes_prints_the_inventory_without_binding(project: Path) -> None:
    result = run_svc(
        "serve",
        "--config",
        str(project / "svc.config.yaml"),
        "--dry-run",
        "--print-routes",
        "--enable-groups",
    )
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == ["GET /healthz", "GET /readyz", "GET /status"]
    assert "POST /webhooks/whatsapp" in lines
    assert "DELETE /api/groups/:groupId/participants" in lines
    assert "dry-run" not in result.stderr


def test_a_store_that_cannot_be_opened_stops_serve_before_binding(project: Path) -> None:
    result = run_svc(
        "serve",
        "--config",
        str(project / "svc.config.yaml"),
        "--dry-run",
        "--port",
        "0",
        "--database",
        str(project / "missing-folder" / "svc.db"),
    )
    assert result.returncode == 1
    assert "the store could not be opened or migrated" in result.stderr
    assert "missing-folder" not in result.stderr
    assert "svc: serving" not in result.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_address_in_use_exits_1_naming_it_and_the_cause(project: Path, workers: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_svc(
            *("serve", "--config", str(project / "svc.config.yaml"), "--dry-run"),
            *("--host", "127.0.0.1", "--port", str(port), "--workers", workers),
        )
    assert result.returncode == 1
    line = (
        f"Error: the address 127.0.0.1:{port} cannot be bound: "
        "OSError: [Errno 98] Address already in use"
    )
    assert result.stderr.splitlines()[-1] == line
    assert "Traceback" not in result.stderr
    # docs/cli.md quotes the line with the default port.
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert f"`{line.replace(str(port), '8787')}`" in " ".join(page.split())


def test_sigterm_with_an_idle_keep_alive_connection_exits_without_waiting_for_the_drain_window(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    """A client that keeps its connection open after its answer does not hold the exit."""
    served = _init_and_serve_dry_run(tmp_path, serving)
    with httpx.Client(base_url=served.url, timeout=10) as client:
        assert client.get("/healthz").status_code == 200
        # The pooled connection is idle and open now.
        began = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=DRAIN_SECONDS) == 0
        took = time.monotonic() - began
    served.drain()
    assert took < DRAIN_SECONDS / 2, took
    assert served.lines[-1] == "svc: stopped."
