"""``svc.asgi:create()`` under a real ``hypercorn --worker-class trio`` process."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

import svc.asgi
import svc.http  # the first Quart import is paid at collection, not in a test
from svc.cli import (
    CliUsageError,
    LiveGuardError,
    SecretResolutionError,
    ServeError,
    cli,
    handler_options_from_env,
)
from svc.crypto import generate_inbox_key
from tests._support import WEBSOCKET_HEAD, child_env, data_after_answer

RUNNING = re.compile(r"Running on (http://\S+)")

SECRETS = {
    "SVC_ACCESS_TOKEN": "EAAGasgiAccessToken42",
    "SVC_VERIFY_TOKEN": "asgi-verify-token-42",
    "SVC_APP_SECRET": "asgi-app-secret-42",
    "SVC_SERVICE_TOKEN": "asgi-service-token-42",
}


def _env(project: Path, **extra: str) -> dict[str, str]:
    return {
        "SVC_CONFIG": str(project / "svc.config.yaml"),
        "SVC_PHONE_NUMBER_ID": "106540352242922",
        "SVC_WABA_ID": "102290129340398",
        "SVC_LIVE_ENABLE": "1",
        "SVC_YES_LIVE": "1",
        **SECRETS,
        **extra,
    }


@contextlib.contextmanager
def _hypercorn(project: Path, env: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """A real ``hypercorn --worker-class trio 'svc.asgi:create()'``: its base URL and lines."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hypercorn",
                "--worker-class",
                "trio",
                "--bind",
                f"fd://{listener.fileno()}",
                "svc.asgi:create()",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            pass_fds=[listener.fileno()],
            env=child_env(env),
            cwd=project,
        )
    lines: list[str] = []
    started = threading.Event()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if RUNNING.search(line):
                started.set()
        started.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        assert started.wait(timeout=60)
        assert process.poll() is None, "".join(lines)
        yield f"http://127.0.0.1:{port}", lines
        assert process.poll() is None, "".join(lines)
    finally:
        process.terminate()
        process.wait(timeout=30)
        reader.join(timeout=30)
        assert process.stdout is not None
        process.stdout.close()


@pytest.mark.slow
def test_hypercorn_serves_the_factory_app(project: Path) -> None:
    with _hypercorn(project, _env(project, SVC_DATABASE=str(project / "svc.db"))) as (base, lines):
        health = httpx.get(base + "/healthz", timeout=10)
        ready = httpx.get(base + "/readyz", timeout=10)
        status = httpx.get(
            base + "/status",
            headers={"Authorization": f"Bearer {SECRETS['SVC_SERVICE_TOKEN']}"},
            timeout=10,
        )
    assert health.status_code == 200
    assert health.json()["ok"] is True
    assert ready.status_code == 200
    assert status.status_code == 200
    assert status.json()["serviceMode"] is not None
    assert status.json()["persistence"] is not None
    assert (project / "svc.db").is_file()
    output = "".join(lines) + json.dumps(status.json())
    for value in SECRETS.values():
        assert value not in output


@pytest.mark.slow
def test_one_connection_cannot_stop_plain_hypercorn(project: Path) -> None:
    """The connection guard holds under hypercorn's own trio worker too: DATA on an
    answered HTTP/2 stream and a WebSocket upgrade with a stray byte end only their
    connections, counted on ``/metrics``."""
    auth = {"Authorization": f"Bearer {SECRETS['SVC_SERVICE_TOKEN']}"}
    with _hypercorn(project, _env(project)) as (base, lines):
        host, port = base.removeprefix("http://").rsplit(":", 1)
        assert data_after_answer(host, int(port)) == (404, True)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(WEBSOCKET_HEAD % b"/healthz" + b"x")
            with contextlib.suppress(TimeoutError, ConnectionResetError):
                while sock.recv(65536):
                    pass
        health = httpx.get(base + "/healthz", timeout=10)
        metrics = httpx.get(base + "/metrics", headers=auth, timeout=10).text
    assert health.status_code == 200
    assert 'svc_connection_errors_total{error_class="KeyError"} 1.0' in metrics
    assert 'svc_connection_errors_total{error_class="h11.LocalProtocolError"} 1.0' in metrics
    assert any('"event":"svc.connection.error","errorClass":"KeyError"' in line for line in lines)


def test_create_refuses_without_the_live_gates(project: Path) -> None:
    with pytest.raises(LiveGuardError):
        svc.asgi.create(_env(project, SVC_YES_LIVE="0"))


def test_create_names_a_missing_secret_without_any_value(project: Path) -> None:
    env = _env(project)
    del env["SVC_APP_SECRET"]
    with pytest.raises(SecretResolutionError) as caught:
        svc.asgi.create(env)
    assert caught.value.format_message() == "SVC_APP_SECRET is not set."


def test_create_builds_the_app_from_the_environment(project: Path) -> None:
    app = svc.asgi.create(_env(project))
    assert callable(app)


def test_the_handler_settings_come_from_the_environment(project: Path) -> None:
    app = svc.asgi.create(
        _env(
            project,
            SVC_HANDLER_CONCURRENCY="3",
            SVC_HANDLER_TIMEOUT="7",
            SVC_HANDLER_MAX_ATTEMPTS="2",
            SVC_HANDLER_MAX_WAITING="0",
        )
    )
    options = app.extensions["svc.handlers"].options
    assert (options.concurrency, options.timeout, options.max_attempts) == (3, 7, 2)
    assert options.max_waiting == 0
    with pytest.raises(CliUsageError, match="SVC_HANDLER_TIMEOUT must be an integer"):
        svc.asgi.create(_env(project, SVC_HANDLER_TIMEOUT="soon"))


@pytest.mark.parametrize(
    ("flag", "variable", "low", "high"),
    [
        ("--handler-concurrency", "SVC_HANDLER_CONCURRENCY", 1, 1024),
        ("--handler-max-waiting", "SVC_HANDLER_MAX_WAITING", 0, 100_000),
        ("--handler-timeout", "SVC_HANDLER_TIMEOUT", 1, 86_400),
        ("--handler-max-attempts", "SVC_HANDLER_MAX_ATTEMPTS", 1, 100),
    ],
)
def test_a_handler_setting_has_one_range_as_a_flag_and_as_a_variable(
    project: Path, flag: str, variable: str, low: int, high: int
) -> None:
    """``svc serve``'s flag and the factory's variable take the same bounds and refuse the
    same values, each naming itself."""
    refusal = f"must be an integer {low}..{high}."
    for value, allowed in ((low, True), (high, True), (low - 1, False), (high + 1, False)):
        served = CliRunner().invoke(
            cli,
            [
                "serve",
                "--config",
                str(project / "svc.config.yaml"),
                "--dry-run",
                "--print-routes",
                *(flag, str(value)),
            ],
        )
        assert (served.exit_code, served.stderr) == (
            (0, "") if allowed else (1, f"Error: {flag} {refusal}\n")
        ), value
        if allowed:
            assert getattr(handler_options_from_env({variable: str(value)}), _field(flag)) == value
        else:
            with pytest.raises(CliUsageError) as caught:
                handler_options_from_env({variable: str(value)})
            assert caught.value.format_message() == f"{variable} {refusal}"


def _field(flag: str) -> str:
    return flag.removeprefix("--handler-").replace("-", "_")


BOT = """\
from svc.webhook import DefaultFacade

bot = DefaultFacade()
bot.on("message", lambda update: None)
"""


def test_svc_app_names_the_facade_and_with_a_store_needs_the_inbox_key(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "asgibot.py").write_text(BOT)
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the working folder is put first
    monkeypatch.delitem(sys.modules, "asgibot", raising=False)
    app = svc.asgi.create(_env(project, SVC_APP="asgibot:bot"))
    assert app.extensions["svc"].facade is sys.modules["asgibot"].bot
    with pytest.raises(SecretResolutionError) as caught:
        svc.asgi.create(_env(project, SVC_APP="asgibot:bot", SVC_DATABASE="svc.db"))
    assert caught.value.format_message() == "SVC_INBOX_KEY is not set (an inbox key)."
    assert not (project / "svc.db").exists()
    key = generate_inbox_key()
    stored = svc.asgi.create(
        _env(project, SVC_APP="asgibot:bot", SVC_DATABASE="svc.db", SVC_INBOX_KEY=key)
    )
    assert stored.extensions["svc"].store is not None
    with pytest.raises(ServeError) as refused:
        svc.asgi.create(_env(project, SVC_APP="no_such_bot_xyz:bot"))
    assert refused.value.format_message() == (
        "SVC_APP no_such_bot_xyz:bot: module 'no_such_bot_xyz' cannot be imported: "
        "ModuleNotFoundError: No module named 'no_such_bot_xyz'"
    )
    monkeypatch.delitem(sys.modules, "asgibot")
