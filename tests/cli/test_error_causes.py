"""Issue 26: every CLI error names its cause, and documented commands run as written.

Each test runs the real command (``python -m svc``) and checks what the user reads.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from svc.crypto import generate_inbox_key
from tests._support import ServeProcess, child_env, run_svc, start_serve

pytestmark = pytest.mark.slow


# --- item 1: usage errors name the option, never the value --------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["serve", "--prot", "1"],
            "Error: no such option '--prot' (did you mean '--port'?). Try 'svc serve --help'.",
        ),
        (
            ["serve", "--dry-run"],
            "Error: missing option '--config'. Try 'svc serve --help'.",
        ),
        (["serv"], "Error: unknown command (did you mean 'serve'?). Try 'svc --help'."),
        (["bogus-command"], "Error: unknown command. Try 'svc --help'."),
        ([], "Error: missing command. Try 'svc --help'."),
        (["messages"], "Error: missing command. Try 'svc messages --help'."),
        (
            ["messages", "lst"],
            "Error: unknown command (did you mean 'list'?). Try 'svc messages --help'.",
        ),
        (
            ["init", "--format", "xml-secret"],
            "Error: invalid value for option '--format' (choose from yaml, json). "
            "Try 'svc init --help'.",
        ),
        (
            ["config", "validate", "a.yaml", "extra-secret-arg"],
            "Error: unexpected extra argument. Try 'svc config validate --help'.",
        ),
    ],
)
def test_usage_errors_name_the_option_and_suggest_a_near_miss(
    args: list[str], expected: str
) -> None:
    result = run_svc(*args)
    assert result.returncode == 1
    assert result.stderr == expected + "\n"
    assert result.stdout == ""


def test_an_option_given_with_a_secret_value_shows_the_name_only() -> None:
    result = run_svc("serve", "--token=EAAGsecretValue123", "--config", "x.yaml")
    assert result.returncode == 1
    assert result.stderr.startswith("Error: no such option '--token'")
    assert "EAAGsecretValue123" not in result.stderr


# --- item 3: a literal secret in the config says why it is refused -------------------------------


def test_a_literal_secret_says_secrets_are_env_references(project: Path) -> None:
    path = project / "svc.config.yaml"
    path.write_text(path.read_text().replace("{env: SVC_APP_SECRET}", '"literal-app-secret"'))
    result = run_svc("config", "validate", str(path))
    assert result.returncode == 1
    assert result.stderr.splitlines()[1] == (
        "  - profiles.default.secrets.webhookAppSecret: a secret is written {env: NAME} "
        "(e.g. {env: SVC_ACCESS_TOKEN}); a literal secret is refused on purpose, "
        "so it never lands in a config file"
    )
    assert "literal-app-secret" not in result.stderr


# --- item 8: the init hint is the README's main-job command --------------------------------------


def test_init_hint_names_its_placeholder_and_the_database(tmp_path: Path) -> None:
    result = run_svc("init", "demo", cwd=tmp_path)
    assert result.returncode == 0
    hint = result.stdout.splitlines()[1]
    assert hint == (
        "Next (DIR = the folder you gave): "
        "svc serve --config DIR/svc.config.yaml --dry-run --database DIR/svc.db"
    )
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    main_job = hint.split(": ", 1)[1].replace("DIR", "demo")
    assert main_job in readme
    ignored = (tmp_path / "demo" / ".gitignore").read_text().splitlines()
    assert ".env*" in ignored
    assert "!.env.example" in ignored


def test_init_keeps_an_existing_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("mine\n")
    result = run_svc("init", str(tmp_path))
    assert result.returncode == 0
    assert result.stdout.startswith("svc init: wrote 2 files (svc.config.yaml, .env.example);")
    assert (tmp_path / ".gitignore").read_text() == "mine\n"


# --- item 9: flows keygen creates its folder; the printed snippet is Python ----------------------


def test_flows_keygen_creates_the_out_dir_0700_and_prints_runnable_python(tmp_path: Path) -> None:
    result = run_svc("flows", "keygen", "--out-dir", "keys", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    keys = tmp_path / "keys"
    assert stat.S_IMODE(keys.stat().st_mode) == 0o700
    assert stat.S_IMODE((keys / "flows_private_key.pem").stat().st_mode) == 0o600
    lines = result.stdout.splitlines()
    start = lines.index("from pathlib import Path")
    end = lines.index(
        "Keep the private key secret; serve reads it from the env name in flows.privateKey."
    )
    snippet = "\n".join(lines[start:end])
    namespace: dict[str, object] = {}
    exec(compile(snippet, "<keygen snippet>", "exec"), namespace)  # noqa: S102 - our own output
    from svc.graph import PhoneNumberClient

    assert callable(namespace["upload_flows_public_key"])
    assert namespace["PhoneNumberClient"] is PhoneNumberClient
    assert hasattr(PhoneNumberClient, "set_business_public_key")


# --- item 2: a store that does not open says which way -------------------------------------------

_STORE = "Error: the store could not be opened or migrated"


def _serve_with_store(project: Path, *store: str, env: dict[str, str] | None = None) -> str:
    result = run_svc(
        "serve",
        "--config",
        str(project / "svc.config.yaml"),
        "--dry-run",
        "--port",
        "0",
        *store,
        env=env,
    )
    assert result.returncode == 1
    assert "svc: serving" not in result.stderr
    return result.stderr.splitlines()[-1]


_LONG = "n" * 300  # past NAME_MAX: stat() itself fails (ENAMETOOLONG)


@pytest.mark.parametrize(
    "args",
    [
        ["init", _LONG],
        ["setup", _LONG],
        ["openapi", "--config", "svc.config.yaml", "--out", _LONG],
        ["serve", "--config", "svc.config.yaml", "--dry-run", "--env-file", _LONG],
        ["flows", "keygen", "--out-dir", f"{_LONG}/keys"],
        [
            *("broadcast", "send", "--config", "svc.config.yaml", "--template", "t"),
            *("--language", "en", "--recipients", _LONG),
        ],
    ],
)
def test_a_path_the_system_refuses_is_one_error_line_without_the_path(
    project: Path, args: list[str]
) -> None:
    result = run_svc(*args, cwd=project, input_text="")
    assert result.returncode == 1
    assert result.stderr == "Error: a file or folder could not be used: File name too long.\n"


def test_sqlite_store_errors_name_the_cause_not_the_path(project: Path) -> None:
    missing = _serve_with_store(project, "--database", str(project / "no-such-dir" / "x.db"))
    assert missing == f"{_STORE}: the SQLite file's folder does not exist (create it first)."
    folder = _serve_with_store(project, "--database", str(project))
    assert folder == f"{_STORE}: the SQLite path is a folder, not a file."
    (project / "junk.db").write_bytes(b"not a database\x00" * 512)
    junk = _serve_with_store(project, "--database", str(project / "junk.db"))
    assert junk == (
        f"{_STORE} (migration_failed): SQLite migration failed: the file is not an SQLite database."
    )


async def test_a_failing_migration_is_named(project: Path) -> None:
    import sqlite3

    from svc.store import SqliteStore

    store = SqliteStore(project / "old.db")
    await store.migrate(target_version=2)
    await store.close()
    with sqlite3.connect(project / "old.db") as conn:
        conn.execute("CREATE TABLE svc_messages (x INTEGER)")  # in the way of migration 3
    line = _serve_with_store(project, "--database", str(project / "old.db"))
    assert line == (
        f"{_STORE} (migration_failed): Migration 003_message_projection failed and was rolled back."
    )


def test_postgres_unreachable_server_is_named_and_the_dsn_is_not(project: Path) -> None:
    from tests._support import free_port

    dsn = f"postgresql://postgres:pw-secret@127.0.0.1:{free_port()}/db"
    line = _serve_with_store(project, "--database-url-env", "MY_DSN", env={"MY_DSN": dsn})
    assert line == (
        f"{_STORE} (migration_failed): PostgreSQL connection failed: the server cannot be "
        "reached (is it running, are host and port right?)."
    )
    assert "pw-secret" not in line


def test_postgres_missing_database_and_refused_user_are_named(project: Path) -> None:
    url = os.environ.get("SVC_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("SVC_TEST_POSTGRES_URL is not set")
    base = url.rsplit("/", 1)[0]
    missing = _serve_with_store(
        project, "--database-url-env", "MY_DSN", env={"MY_DSN": f"{base}/svc_no_such_db_h10"}
    )
    assert missing == (
        f"{_STORE} (migration_failed): PostgreSQL connection failed: the database does not "
        "exist (create it first)."
    )
    assert "svc_no_such_db_h10" not in missing


def test_a_missing_postgres_extra_prints_the_install_command(project: Path) -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None; "
        "from svc.cli import main; sys.argv = ['svc', *sys.argv[1:]]; main()"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "serve",
            "--config",
            str(project / "svc.config.yaml"),
            "--dry-run",
            "--port",
            "0",
            "--database-url-env",
            "MY_DSN",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=child_env({"MY_DSN": "postgresql://postgres@127.0.0.1:1/x"}),
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        f"{_STORE} (driver_missing): PostgreSQL support needs the postgres extra: "
        "pip install 'svc[postgres]'"
    )


# --- item 6: doctor --check-env names every missing variable, and reads --env-file ----------------


def test_doctor_check_env_names_every_missing_variable_at_once(project: Path) -> None:
    config = str(project / "svc.config.yaml")
    (project / ".env.doc").write_text("SVC_ACCESS_TOKEN=EAAGdoctorSecret\nSVC_APP_SECRET=app-s\n")
    result = run_svc(
        "doctor", "--config", config, "--check-env", "--env-file", ".env.doc", cwd=project
    )
    assert result.returncode == 1
    assert "FAIL env: not set: SVC_WABA_ID, SVC_PHONE_NUMBER_ID, SVC_VERIFY_TOKEN, " \
        "SVC_SERVICE_TOKEN, SVC_INBOX_KEY." in result.stdout.splitlines()  # fmt: skip
    assert "EAAGdoctorSecret" not in result.stdout + result.stderr
    complete = (
        "SVC_ACCESS_TOKEN=EAAGdoctorSecret\nSVC_APP_SECRET=app-s\nSVC_VERIFY_TOKEN=v\n"
        "SVC_SERVICE_TOKEN=s\nSVC_WABA_ID=102290129340398\nSVC_PHONE_NUMBER_ID=106540352242922\n"
    )
    (project / ".env.doc").write_text(complete + "SVC_INBOX_KEY=not-a-key\n")
    malformed = run_svc(
        "doctor", "--config", config, "--check-env", "--env-file", ".env.doc", cwd=project
    )
    assert malformed.returncode == 1
    assert "FAIL env: SVC_INBOX_KEY must be 32 bytes written as base64 " \
        "(openssl rand -base64 32)." in malformed.stdout.splitlines()  # fmt: skip
    assert "not-a-key" not in malformed.stdout + malformed.stderr
    (project / ".env.doc").write_text(complete + f"SVC_INBOX_KEY={generate_inbox_key()}\n")
    good = run_svc(
        "doctor", "--config", config, "--check-env", "--env-file", ".env.doc", cwd=project
    )
    assert good.returncode == 0, good.stdout
    assert "ok   env: every referenced variable is set and resolves" in good.stdout.splitlines()
    alone = run_svc("doctor", "--config", config, "--env-file", ".env.doc", cwd=project)
    assert alone.returncode == 1
    assert alone.stderr == "Error: --env-file is read by --check-env: give both.\n"


# --- item 10: the dry-run service takes its tokens from an env file ------------------------------


def test_dry_run_takes_tokens_from_the_env_file_and_messages_use_the_same_file(
    project: Path, serving: list[ServeProcess]
) -> None:
    token = "svc_st_" + "k" * 43
    (project / ".env.cli").write_text(f"SVC_SERVICE_TOKEN={token}\n")
    config = str(project / "svc.config.yaml")
    args = ("--config", config, "--dry-run", "--env-file", ".env.cli", "--port", "0")
    for _ in range(2):  # the same token after a restart
        served = start_serve(*args, "--database", "svc.db", cwd=project)
        serving.append(served)
        assert "dry-run tokens from the environment: SVC_SERVICE_TOKEN" in served.lines
        assert not any(line.startswith("dry-run serviceBearerToken=") for line in served.lines)
        assert set(served.secrets) == {"webhookVerifyToken", "webhookAppSecret"}
        sent = httpx.post(
            served.url + "/api/messages/text",
            json={"to": "15551234567", "text": "hello"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert sent.status_code == 200
        listed = run_svc(
            "messages", "list", "--config", config, "--env-file", ".env.cli",
            "--url", served.url, cwd=project,
        )  # fmt: skip
        assert listed.returncode == 0, listed.stderr
        assert token not in listed.stdout + listed.stderr + "\n".join(served.lines)
        assert served.stop() == 0
