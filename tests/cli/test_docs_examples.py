"""Issue 26 item 11: the examples of ``docs/http.md`` and ``docs/cli.md`` run as written.

``docs/http.md``: every ``sh`` block is run by bash against a dry-run service
(``localhost:8787`` pointed at its port); every ``curl`` must answer 2xx.
``docs/cli.md``: every ``$ svc ...`` command of a ``text`` block runs in order
in a fresh folder, with its documented exit code; a documented ``Error:`` line
is the one printed, and the route inventory is printed exactly.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests._support import ServeProcess, child_env, sign, start_serve

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[2] / "docs"
GROUP_ID = "120363000000000001"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _blocks(page: str, kind: str) -> list[str]:
    text = (DOCS / page).read_text()
    return [body for lang, body in _FENCE.findall(text) if lang == kind]


def _bash(script: str, *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    venv_bin = str(Path(sys.executable).parent)
    full_env = child_env({**env, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")})
    return subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=cwd,
        env=full_env,
    )


def _start(cwd: Path, *args: str, env: dict[str, str] | None = None) -> ServeProcess:
    return start_serve(*args, "--port", "0", cwd=cwd, env=env)


# --- docs/http.md ------------------------------------------------------------------------------


def test_every_curl_example_of_http_md_answers_2xx(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    assert _bash("svc init p", cwd=tmp_path, env={}).returncode == 0
    served = _start(
        tmp_path,
        "--config", "p/svc.config.yaml", "--dry-run", "--database", "svc.db", "--enable-groups",
    )  # fmt: skip
    serving.append(served)
    auth = {"Authorization": f"Bearer {served.bearer}"}
    sent = [
        httpx.post(
            served.url + "/api/messages/text",
            json={"to": "15551234567", "text": text},
            headers=auth,
            timeout=10,
        ).json()["messages"][0]["id"]
        for text in ("one", "two")
    ]
    page = httpx.get(served.url + "/api/messages?limit=1", headers=auth, timeout=10).json()
    env = {
        "T": served.bearer,
        "VT": served.secrets["webhookVerifyToken"],
        "APP_SECRET": served.app_secret,
        "WAMID": sent[0],
        "CURSOR": page["nextCursor"],
        "G": GROUP_ID,
    }
    host = served.url.removeprefix("http://")
    # Every curl reports its status on a line of its own after the body.
    shim = "curl() { command curl -w '\\n@status %{http_code}\\n' \"$@\"; }\n"
    blocks = _blocks("http.md", "sh")
    types: set[str] = set()
    ran = 0
    for block in blocks:
        script = shim + block.replace("localhost:8787", host)
        result = _bash(script, cwd=tmp_path, env=env)
        assert result.returncode == 0, (block, result.stderr)
        statuses = re.findall(r"^@status (\d{3})$", result.stdout, re.M)
        expected = len(re.findall(r"^\s*curl ", block, re.M))
        assert len(statuses) == expected, (block, result.stdout)
        assert all(status.startswith("2") for status in statuses), (block, result.stdout)
        ran += expected
        types.update(re.findall(r"""-d '\{"type":"(\w+)\"""", block))
    from svc.http._bodies import COMPOSER_TYPES

    assert types >= set(COMPOSER_TYPES)
    assert ran >= 40
    assert served.stop() == 0


# --- docs/cli.md -------------------------------------------------------------------------------

_ANNOTATION = re.compile(r"\s+(\(stderr\)|\(abridged\)|#.*)$")


def _commands(text: str) -> list[tuple[str, list[str], int | None]]:
    """``(command, documented output lines, documented exit code)`` of each ``$ `` line."""
    found: list[tuple[str, list[str], int | None]] = []
    for block in _blocks("cli.md", "text"):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            lines = chunk.rstrip("\n").split("\n")
            while lines[0].endswith("\\") and len(lines) > 1:  # a command continued with \\
                lines[0:2] = [lines[0][:-1].rstrip() + " " + lines[1].strip()]
            first, *rest = lines
            code = None
            if rest and (marker := re.fullmatch(r"\[exit (\d+)\]", rest[-1])):
                code = int(marker.group(1))
                rest = rest[:-1]
            found.append((_ANNOTATION.sub("", first).strip(), rest, code))
    return found


def test_every_command_of_cli_md_runs_as_documented(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    commands = _commands((DOCS / "cli.md").read_text())
    assert len(commands) >= 20
    token = "svc_st_" + "d" * 43
    env = {"SERVICE_BEARER_TOKEN": token}
    served: ServeProcess | None = None
    postgres = os.environ.get("SVC_TEST_POSTGRES_URL")
    documented_id = re.compile(r"wamid\.DRYRUN\.[0-9a-f]+")
    real_id = ""
    broadcast_id = re.compile(r"\b[0-9a-f]{32}\b")
    real_broadcast = ""
    (tmp_path / "people.csv").write_text(
        "to,first_name\n15551230001,Ann\n15551230002,Bo\nUS.13491208655302741918,Cy\n"
        "15551230001,Ann\n"
    )
    for command, output, code in commands:
        if command.startswith("svc serve") and "--print-routes" not in command and code is None:
            # The documented start of the service: run it in the background with the port of
            # the test, its bearer from the environment (docs/cli.md "Dry run").
            args = shlex.split(command)[2:]
            served = _start(tmp_path, *args, env={"SVC_SERVICE_TOKEN": token})
            serving.append(served)
            (tmp_path / ".env.cli").write_text(f"SVC_SERVICE_TOKEN={token}\n")
            answer = httpx.post(
                served.url + "/api/messages/text",
                json={"to": "15551234567", "text": "for the docs"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
            real_id = answer.json()["messages"][0]["id"]
            continue
        if "--database-url-env DATABASE_URL" in command:
            if not postgres:
                continue
            env["DATABASE_URL"] = postgres.rsplit("/", 1)[0] + "/svc_docs_no_such_database"
        if "broken.yaml" in command:
            config = (tmp_path / "demo" / "svc.config.yaml").read_text()
            broken = config.replace("{env: SVC_ACCESS_TOKEN}", '"EAAGliteral"')
            (tmp_path / "broken.yaml").write_text(broken)
        if served is not None:
            command = command.replace("http://127.0.0.1:8795", served.url)
            command = command.replace("http://127.0.0.1:8787", served.url)
            command = documented_id.sub(real_id, command)
            if command.startswith("svc broadcast status"):
                command = broadcast_id.sub(real_broadcast, command)
        result = _bash(command, cwd=tmp_path, env=env)
        if command.startswith("svc broadcast send"):
            found = broadcast_id.search(result.stdout)
            assert found is not None, (command, result.stdout, result.stderr)
            real_broadcast = found.group(0)
        expected = 0 if code is None else code
        assert result.returncode == expected, (command, result.stdout, result.stderr)
        errors = [line for line in output if line.startswith("Error: ")]
        printed = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
        if errors and "--format json" not in command:
            assert printed == errors, command
        if "--print-routes" in command:
            assert result.stdout.splitlines() == output, command
        if command.startswith("svc doctor"):  # the lines that depend on svc, not the machine
            _check_doctor(result.stdout, output, command)
        if command.startswith("svc messages list") and expected == 0:  # the header, the cells
            header, *rows = result.stdout.splitlines()
            assert header == output[0], command
            assert {row.count("\t") for row in rows} <= {header.count("\t")}, command
    assert served is not None
    assert served.stop() == 0


def test_the_token_kept_in_env_cli_of_cli_md_is_the_dry_runs_bearer(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    keep, serve = _blocks("cli.md", "sh")[0].strip().splitlines()
    assert _bash("svc init demo", cwd=tmp_path, env={}).returncode == 0
    assert _bash(keep, cwd=tmp_path, env={}).returncode == 0
    name, token = (tmp_path / ".env.cli").read_text().strip().split("=", 1)
    assert name == "SVC_SERVICE_TOKEN" and re.fullmatch(r"svc_st_[A-Za-z0-9_-]{43}", token)
    for _ in range(2):  # it survives a restart
        served = _start(tmp_path, *shlex.split(serve)[2:])
        serving.append(served)
        assert "dry-run tokens from the environment: SVC_SERVICE_TOKEN" in served.lines
        sent = httpx.post(
            served.url + "/api/messages/text",
            json={"to": "15551234567", "text": "kept"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert sent.status_code == 200
        assert served.stop() == 0


def test_the_several_numbers_config_of_cli_md_serves_in_a_dry_run(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    """Its numbers' own tokens are not needed in a dry run (the access token is synthetic)."""
    [config] = _blocks("cli.md", "yaml")
    (tmp_path / "svc.config.yaml").write_text(config)
    served = _start(tmp_path, "--config", "svc.config.yaml", "--dry-run")
    serving.append(served)
    assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200
    assert served.stop() == 0


def _check_doctor(stdout: str, documented: list[str], command: str) -> None:
    """``svc doctor``'s config, profile, routes and OpenAPI lines and its summary, as shown (text);
    the env check's detail (json)."""
    if "--format json" in command:
        [shown] = [line for line in documented if '"name": "env"' in line]
        detail = re.search(r'"detail": "([^"]*)"', shown)
        assert detail is not None, shown
        checks = {check["name"]: check for check in json.loads(stdout)["checks"]}
        assert checks["env"]["detail"] == detail.group(1), command
        return
    stable = re.compile(r"(ok  |FAIL) (config|profile|routes|openapi): |doctor: ")
    assert [line for line in stdout.splitlines() if stable.match(line)] == [
        line for line in documented if stable.match(line)
    ], command


# --- README.md: the first command, run twice, and the first bot ---------------------------------

README = DOCS.parent / "README.md"


def _readme_blocks(kind: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(README.read_text()) if lang == kind]


def test_the_readme_first_command_can_be_run_twice(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    first = _readme_blocks("sh")[0].strip()
    steps = first.split(" && ")
    # The set-up steps (venv, install) are the test's own environment; the rest runs as written.
    assert steps[:3] == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install -e ."]
    *prepare, serve = steps[3:]
    assert serve.startswith("svc serve ")
    for _ in range(2):
        result = _bash(" && ".join(prepare), cwd=tmp_path, env={})
        assert result.returncode == 0, result.stderr
        served = _start(tmp_path, *shlex.split(serve)[2:])
        serving.append(served)
        assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200
        assert served.stop() == 0


def test_the_readme_bot_replies_to_the_signed_curl_delivery_as_written(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    assert _bash("svc init demo", cwd=tmp_path, env={}).returncode == 0
    [bot] = [block for block in _readme_blocks("python") if block.startswith("# bot.py\n")]
    (tmp_path / "bot.py").write_text(bot)
    [serve] = [
        block.strip() for block in _readme_blocks("sh") if block.startswith("svc serve --config")
        and "--app bot:bot" in block
    ]
    served = _start(tmp_path, *shlex.split(serve)[2:])
    serving.append(served)
    [curl] = [block for block in _readme_blocks("sh") if "openssl dgst" in block]
    assert re.search(r"^APP_SECRET=svc_as_\.\.\. ", curl, re.M)
    script = re.sub(r"^APP_SECRET=.*$", f"APP_SECRET={served.app_secret}", curl, flags=re.M)
    script = script.replace("http://127.0.0.1:8787", served.url)
    result = _bash(script, cwd=tmp_path, env={})
    assert result.returncode == 0, result.stderr
    readme = README.read_text()
    answer = '{"status":"ok","received":1,"dispatched":1,"skipped":0,"queued":1}'
    assert result.stdout == answer and f"It answers `{answer}`" in readme
    [log] = [block.strip() for block in _readme_blocks("text") if "message_id=" in block]
    documented = re.escape(log).replace(re.escape("<id>"), r"[0-9a-f]+")
    served.wait_for_line(re.compile(f"^{documented}$"))
    again = _bash(script, cwd=tmp_path, env={})
    assert '"dispatched":0' in again.stdout
    assert served.stop() == 0
    assert "Hello bot" not in "\n".join(served.lines)


def test_the_readme_dev_block_talks_to_the_first_bot_as_written(tmp_path: Path) -> None:
    """``svc dev --app bot:bot`` (README and docs/dev.md) serves the README's bot: the URL
    line, the folder layout and the answer drawn from a text are the documented ones."""
    [bot] = [block for block in _readme_blocks("python") if block.startswith("# bot.py\n")]
    (tmp_path / "bot.py").write_text(bot)
    [command] = [block.strip() for block in _readme_blocks("sh") if block.startswith("svc dev")]
    assert [b.strip() for b in _blocks("dev.md", "sh")] == [command]
    [url_line] = [b.strip() for b in _readme_blocks("text") if b.startswith("svc dev: open")]
    assert url_line in _blocks("dev.md", "text")[0]
    served = start_serve(
        *shlex.split(command)[2:], "--port", "0", "--no-reload", cwd=tmp_path, command="dev"
    )
    try:
        documented = re.escape(url_line).replace("8787", r"(\d+)").replace(
            re.escape("<token>"), r"(\S+)"
        )
        [found] = [m for line in served.lines if (m := re.fullmatch(documented, line))]
        base, token = f"http://127.0.0.1:{found.group(1)}", found.group(2)
        answer = httpx.post(
            f"{base}/dev/api/act",
            json={
                "user": {"name": "Kerry", "phone": "16505551234"},
                "action": {"kind": "text", "text": "Hello bot"},
            },
            headers={"X-Svc-Dev-Token": token},
            timeout=10,
        )
        assert answer.json()["answer"]["body"] == {
            "status": "ok", "received": 1, "dispatched": 1, "skipped": 0, "queued": 1,
        }
        said = r'^dev: bot -> 16505551234 text "You said: Hello bot" sent'
        served.wait_for_line(re.compile(said))
    finally:
        assert served.stop() == 0
    layout = next(b for b in _blocks("dev.md", "text") if b.startswith(".svc-dev/"))
    documented_files = {line.split()[0] for line in layout.splitlines()[1:]}
    made = {p.name for p in (tmp_path / ".svc-dev").iterdir() if not p.name.startswith("dev.db-")}
    assert made == documented_files


# --- docs/handlers.md: the --app serve block ------------------------------------------------------


def test_the_handlers_md_serve_block_serves_the_factory_with_two_workers(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    page = (DOCS / "handlers.md").read_text()
    factory = re.search(r"<!-- handlers-example: factory -->\n```python\n(.*?)```", page, re.S)
    assert factory is not None
    (tmp_path / "bot.py").write_text(factory.group(1))
    assert _bash("svc init demo", cwd=tmp_path, env={}).returncode == 0
    [block] = [b for b in _blocks("handlers.md", "sh") if "--app" in b]
    export, serve = block.strip().splitlines()
    key = _bash(f'{export}\nprintf %s "$SVC_INBOX_KEY"', cwd=tmp_path, env={}).stdout
    assert len(key) == 44
    served = _start(tmp_path, *shlex.split(serve)[2:], env={"SVC_INBOX_KEY": key})
    serving.append(served)
    assert "dry-run inbox keys from the environment: SVC_INBOX_KEY" in served.lines
    assert any(", 2 workers, app bot:make_bot)" in line for line in served.lines)
    assert (
        "svc: handlers run after the answer from the store's encrypted inbox "
        "(8 at once, 30 s deadline, 5 attempts)." in served.lines
    )
    body = (Path(__file__).parents[1] / "webhook" / "fixtures" / "message_text.json").read_bytes()
    answer = httpx.post(
        served.url + "/webhooks/whatsapp",
        content=body,
        headers={"X-Hub-Signature-256": sign(body=body, secret=served.app_secret)},
        timeout=10,
    )
    assert answer.json()["dispatched"] == 1
    served.wait_for_line(re.compile(r"^handler reply sent type=text message_id=wamid\.DRYRUN\."))
    assert served.stop() == 0
    assert key not in "\n".join(served.lines)
