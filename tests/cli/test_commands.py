"""Every command's success and refusal as a real process (``python -m svc``); exits 0 or 1."""

from __future__ import annotations

import json
import re
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import svc.http  # noqa: F401 - the first Quart import is paid at collection
from svc.cli import cli
from tests._support import run_svc

pytestmark = pytest.mark.slow

TOKEN = re.compile(r"^svc_vt_[A-Za-z0-9_-]{43}$")


# --- init ------------------------------------------------------------------------------------


def test_init_writes_config_and_env_example_and_reports_counts_only(tmp_path: Path) -> None:
    target = tmp_path / "secret-folder-name"
    result = run_svc("init", str(target))
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == (
        "svc init: wrote 3 files (svc.config.yaml, .env.example, .gitignore); "
        "1 profile, 5 secret references, 2 id references."
    )
    assert result.stdout.splitlines()[1] == (
        "Next (DIR = the folder you gave): "
        "svc serve --config DIR/svc.config.yaml --dry-run --database DIR/svc.db"
    )
    assert "secret-folder-name" not in result.stdout + result.stderr
    env_example = (target / ".env.example").read_text()
    assert "SVC_ACCESS_TOKEN=\n" in env_example
    assert "SVC_INBOX_KEY=\n" in env_example
    assert "SVC_LIVE_ENABLE=0\n" in env_example
    assert "SVC_YES_LIVE=0\n" in env_example
    validated = CliRunner().invoke(cli, ["config", "validate", str(target / "svc.config.yaml")])
    assert validated.exit_code == 0
    assert validated.stdout == "config valid: 1 profile(s), 7 env reference(s), 0 with flows.\n"


def test_init_refuses_to_overwrite_and_leaves_the_files_alone(project: Path) -> None:
    before = (project / "svc.config.yaml").read_bytes()
    result = run_svc("init", str(project))
    assert result.returncode == 1
    assert "already exists" in result.stderr
    assert (project / "svc.config.yaml").read_bytes() == before


def test_init_json_format_dry_run_and_profile(tmp_path: Path) -> None:
    dry = run_svc("init", str(tmp_path / "a"), "--dry-run", "--format", "json")
    assert dry.returncode == 0
    assert "would write 3 files (svc.config.json, .env.example, .gitignore)" in dry.stdout
    assert not (tmp_path / "a").exists()
    made = run_svc("init", str(tmp_path / "a"), "--format", "json", "--profile", "shop_1")
    assert made.returncode == 0
    data = json.loads((tmp_path / "a" / "svc.config.json").read_text())
    assert data["defaultProfile"] == "shop_1"
    assert data["profiles"]["shop_1"]["secrets"]["accessToken"] == {"env": "SVC_ACCESS_TOKEN"}
    bad = run_svc("init", str(tmp_path / "b"), "--profile", "has space")
    assert bad.returncode == 1
    assert "--profile must be 1..32" in bad.stderr


# --- config validate ----------------------------------------------------------------------------


def test_config_validate_refuses_a_literal_secret_without_echoing_it(project: Path) -> None:
    path = project / "svc.config.yaml"
    path.write_text(path.read_text().replace("{env: SVC_ACCESS_TOKEN}", "EAAGliteralSecretValue"))
    result = run_svc("config", "validate", "--config", str(path))
    assert result.returncode == 1
    assert (
        "profiles.default.secrets.accessToken: a secret is written {env: NAME} "
        "(e.g. {env: SVC_ACCESS_TOKEN}); a literal secret is refused on purpose"
    ) in result.stderr
    assert "EAAGliteralSecretValue" not in result.stdout + result.stderr
    assert str(project) not in result.stderr


def test_config_validate_refuses_a_missing_file_and_double_paths(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["config", "validate", str(tmp_path / "nope-secret.yaml")])
    assert missing.exit_code == 1
    assert missing.stderr == "Error: the config file does not exist.\n"
    both = run_svc("config", "validate", "a.yaml", "--config", "b.yaml")
    assert both.returncode == 1
    assert "give the config file once" in both.stderr


# --- onboarding, webhook token -------------------------------------------------------------------


def test_onboarding_prints_the_callback_and_two_fresh_tokens(tmp_path: Path) -> None:
    result = run_svc(
        "onboarding",
        "--public-url",
        "https://bot.example.com/",
        "--webhook-path",
        "/wh/in",
        cwd=tmp_path,
    )
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "callback URL:  https://bot.example.com/wh/in"
    assert TOKEN.match(lines[1].split()[-1])
    assert re.fullmatch(r"svc_st_[A-Za-z0-9_-]{43}", lines[2].split()[-1])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "url",
    [
        "http://bot.example.com",
        "https://user:pw-secret@bot.example.com",
        "https://bot.example.com/?q=secretquery",
        "https://bot.example.com/#secretfragment",
        "https://bot.example.com/ secretspace",
        "ftp://bot.example.com",
        "https://xn--secret.example.com",  # an A-label the IDNA codec refuses
    ],
)
def test_onboarding_refuses_unsafe_public_urls_without_echoing_them(url: str) -> None:
    result = CliRunner().invoke(cli, ["onboarding", "--public-url", url])
    assert result.exit_code == 1
    assert "--public-url must be an https URL" in result.output
    assert "secret" not in result.output


def test_onboarding_refusal_exits_1_as_a_process() -> None:
    result = run_svc("onboarding", "--public-url", "http://bot.example.com")
    assert result.returncode == 1
    assert "--public-url must be an https URL" in result.stderr


def test_webhook_token_prints_one_fresh_token() -> None:
    first = run_svc("webhook", "token")
    second = run_svc("webhook", "token")
    assert first.returncode == second.returncode == 0
    assert TOKEN.match(first.stdout.strip())
    assert first.stdout != second.stdout
    extra = run_svc("webhook", "token", "extra-arg")
    assert extra.returncode == 1


# --- openapi -----------------------------------------------------------------------------------


def test_openapi_prints_the_document_and_writes_it_exclusively(project: Path) -> None:
    config = str(project / "svc.config.yaml")
    printed = run_svc(
        "openapi", "--config", config, "--server-url", "https://api.example.com/x?y=1#z"
    )
    assert printed.returncode == 0
    document = json.loads(printed.stdout)
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": "https://api.example.com/x"}]
    assert "/api/messages/text" in document["paths"]
    out = project / "openapi.json"
    written = run_svc("openapi", "--config", config, "--out", str(out))
    assert written.returncode == 0
    assert json.loads(out.read_text())["paths"] == document["paths"]
    again = CliRunner().invoke(cli, ["openapi", "--config", config, "--out", str(out)])
    assert again.exit_code == 1
    assert "already exists" in again.stderr


def test_openapi_is_the_same_bytes_in_every_process(project: Path) -> None:
    """A route's methods are a set: the document must not take its order from the hash seed."""
    config = str(project / "svc.config.yaml")
    printed = [
        run_svc("openapi", "--config", config, env={"PYTHONHASHSEED": str(seed)}).stdout
        for seed in (0, 1, 2, 3)
    ]
    assert printed[0] and printed == [printed[0]] * 4
    operations = list(json.loads(printed[0])["paths"]["/status"])
    assert operations == ["get", "put", "post", "delete", "options", "patch"]


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("", "empty"),
        ("/tmp", "directory"),
        ("sub/../x.json", "'.' or '..' segments"),
        ("a\\b.json", "backslash"),
        ("bad\x01name.json", "control character"),
        ("missing-dir/x.json", "cannot be created"),
    ],
)
def test_openapi_out_refuses_unsafe_targets(
    project: Path, out: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(
        cli, ["openapi", "--config", str(project / "svc.config.yaml"), "--out", out]
    )
    assert result.exit_code == 1
    assert message in result.output


@pytest.mark.parametrize("url", ["file:///etc", "https://xn--.example.com"])
def test_openapi_refuses_a_non_http_server_url(project: Path, url: str) -> None:
    result = CliRunner().invoke(
        cli, ["openapi", "--config", str(project / "svc.config.yaml"), "--server-url", url]
    )
    assert result.exit_code == 1
    assert result.stderr == "Error: --server-url must be an http or https URL.\n"


# --- doctor ---------------------------------------------------------------------------------------


def test_doctor_passes_offline_and_reports_json(project: Path) -> None:
    config = str(project / "svc.config.yaml")
    text = run_svc("doctor", "--config", config)
    assert text.returncode == 0, text.stdout
    assert text.stdout.splitlines()[-1] == "doctor: 7 checks, 7 passed, 0 failed"
    report = json.loads(
        CliRunner().invoke(cli, ["doctor", "--config", config, "--format", "json"]).stdout
    )
    assert report["ok"] is True
    assert [check["name"] for check in report["checks"]] == [
        "runtime",
        "imports",
        "versions",
        "config",
        "profile",
        "routes",
        "openapi",
    ]


def test_doctor_fails_with_a_fix_for_each_failed_check(project: Path) -> None:
    config = str(project / "svc.config.yaml")
    env_check = run_svc(
        "doctor",
        "--config",
        config,
        "--check-env",
        "--format",
        "json",
        env={"SVC_ACCESS_TOKEN": "EAAGdoctorSecret"},
    )
    assert env_check.returncode == 1
    report = json.loads(env_check.stdout)
    assert report["ok"] is False
    failed = [check for check in report["checks"] if not check["ok"]]
    assert [check["name"] for check in failed] == ["env"]
    assert failed[0]["detail"] == (
        "not set: SVC_WABA_ID, SVC_PHONE_NUMBER_ID, SVC_VERIFY_TOKEN, SVC_APP_SECRET, "
        "SVC_SERVICE_TOKEN, SVC_INBOX_KEY."
    )
    assert failed[0]["fix"]
    assert "EAAGdoctorSecret" not in env_check.stdout + env_check.stderr
    (project / "svc.config.yaml").write_text("version: 2\n")
    broken = CliRunner().invoke(cli, ["doctor", "--config", config])
    assert broken.exit_code == 1
    assert "FAIL config:" in broken.stdout
    assert "fix: fix the file" in broken.stdout


# --- upgrade ----------------------------------------------------------------------------------


def test_upgrade_dry_run_and_its_alias_print_the_pip_command() -> None:
    for name in ("upgrade", "update"):
        result = run_svc(name, "--dry-run")
        assert result.returncode == 0
        assert result.stdout.startswith(f"{sys.executable} -m pip install --upgrade ")
        assert result.stdout.split()[-1].strip("'").startswith("svc")
    bad = run_svc("upgrade", "--force-secret")
    assert bad.returncode == 1
    # An option name is shown (decisions.md "CLI usage errors"); a value never is.
    assert bad.stderr == "Error: no such option '--force-secret'. Try 'svc upgrade --help'.\n"


# --- setup --------------------------------------------------------------------------------------


def test_setup_refuses_to_overwrite(project: Path) -> None:
    (project / ".env.local").write_text("SVC_ACCESS_TOKEN=x\n")
    result = run_svc("setup", str(project), input_text="")
    assert result.returncode == 1
    assert "already exists" in result.stderr


# --- flows keygen ---------------------------------------------------------------------------------


def test_flows_keygen_writes_a_private_key_0600_and_prints_the_public_key(tmp_path: Path) -> None:
    result = run_svc("flows", "keygen", "--out-dir", str(tmp_path))
    assert result.returncode == 0
    private = tmp_path / "flows_private_key.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    public = (tmp_path / "flows_public_key.pem").read_text()
    assert public.strip() in result.stdout
    assert "set_business_public_key" in result.stdout
    assert "PRIVATE KEY" not in result.stdout
    again = run_svc("flows", "keygen", "--out-dir", str(tmp_path))
    assert again.returncode == 1
    assert "already exists" in again.stderr
    (tmp_path / "a-file").write_text("")
    not_a_folder = run_svc("flows", "keygen", "--out-dir", str(tmp_path / "a-file"))
    assert not_a_folder.returncode == 1
    assert not_a_folder.stderr == "Error: --out-dir exists and is not a folder.\n"


# --- unknown commands ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["serve"], ["config"], ["messages", "show"], ["init", "--format", "xml-secret"]],
)
def test_usage_errors_exit_1_with_a_hint(args: list[str]) -> None:
    result = run_svc(*args)
    assert result.returncode == 1
    assert "svc" in result.stderr
    assert "xml-secret" not in result.stderr
