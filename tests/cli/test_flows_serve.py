"""``svc serve --flow-handler module:callable``: the Flows endpoint end to end, and its refusals."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization

from svc.cli import cli
from svc.flows import generate_flow_key_pair
from tests._support import ServeProcess, run_svc, sign, start_serve
from tests.flows._platform import seal_request

pytestmark = pytest.mark.slow

HANDLER = """
def handle(request):
    return {"screen": "DONE", "data": {"echo": request.data["name"]}}

not_callable = 42
"""


def _flows_project(tmp_path: Path) -> Path:
    from svc.cli._init import config_data

    data = config_data("main")
    profile = data["profiles"]["main"]  # type: ignore[index]
    profile["flows"] = {"path": "/flows/endpoint", "privateKey": {"env": "SVC_FLOWS_KEY"}}
    (tmp_path / "svc.config.json").write_text(json.dumps(data))
    (tmp_path / "myflows.py").write_text(HANDLER)
    return tmp_path / "svc.config.json"


def test_serve_answers_an_encrypted_flows_request_with_the_handler(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    config = _flows_project(tmp_path)
    pair = generate_flow_key_pair()
    served = start_serve(
        "--config",
        str(config),
        "--dry-run",
        "--port",
        "0",
        "--flow-handler",
        "myflows:handle",
        cwd=tmp_path,
        env={"SVC_FLOWS_KEY": pair.private_key_pem.decode()},
    )
    serving.append(served)
    public_key = serialization.load_pem_public_key(pair.public_key_pem)
    sealed = seal_request(
        {"version": "3.0", "action": "data_exchange", "screen": "ASK", "data": {"name": "Zoë"}},
        public_key,  # type: ignore[arg-type]
    )
    answer = httpx.post(
        served.url + "/flows/endpoint",
        content=sealed.body,
        headers={
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(body=sealed.body, secret=served.app_secret),
        },
        timeout=10,
    )
    assert answer.status_code == 200
    assert sealed.open_response(answer.content) == {"screen": "DONE", "data": {"echo": "Zoë"}}
    assert served.stop(signal.SIGINT) == 0
    assert pair.private_key_pem.decode() not in "\n".join(served.lines)


@pytest.mark.parametrize(
    ("handler", "env", "message"),
    [
        (
            "nomodule_xyz:handle",
            True,
            "--flow-handler nomodule_xyz:handle: module 'nomodule_xyz' cannot be imported: "
            "ModuleNotFoundError: No module named 'nomodule_xyz'",
        ),
        (
            "myflows:missing",
            True,
            "--flow-handler myflows:missing: "
            "AttributeError: module 'myflows' has no attribute 'missing'",
        ),
        (
            "myflows:not_callable",
            True,
            "--flow-handler myflows:not_callable: the target is not callable (type int).",
        ),
        ("myflows", True, "--flow-handler myflows: must look like module:callable."),
        ("myflows:handle", False, "SVC_FLOWS_KEY is not set."),
        (None, True, "this profile has a flows section: give --flow-handler"),
    ],
)
def test_flow_handler_refusals_exit_1_before_binding(
    tmp_path: Path, handler: str | None, env: bool, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _flows_project(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "myflows", raising=False)
    args = ["serve", "--config", str(config), "--dry-run", "--port", "0"]
    if handler is not None:
        args += ["--flow-handler", handler]
    key = "-----BEGIN PRIVATE KEY-----\nnot a key\n" if env else None
    result = CliRunner().invoke(cli, args, env={"SVC_FLOWS_KEY": key})
    assert result.exit_code == 1
    assert message in result.stderr
    assert "svc: serving" not in result.stderr
    assert "not a key" not in result.stderr


def test_a_private_key_that_cannot_be_loaded_is_refused(tmp_path: Path) -> None:
    config = _flows_project(tmp_path)
    result = run_svc(
        "serve",
        "--config",
        str(config),
        "--dry-run",
        "--flow-handler",
        "myflows:handle",
        cwd=tmp_path,
        env={"SVC_FLOWS_KEY": "-----BEGIN PRIVATE KEY-----\nnot a key secret\n"},
    )
    assert result.returncode == 1
    assert "the flows private key cannot be loaded" in result.stderr
    assert "not a key secret" not in result.stderr
