"""``svc setup`` driven through its real prompts (click's runner feeds the answers)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from dotenv import dotenv_values
from hypothesis import given
from hypothesis import strategies as st

from svc.cli import SetupInputError, cli
from svc.cli._config import load_config, resolve_profile
from svc.cli._inputs import dotenv_line, live_environment
from svc.cli._operator import write_setup_files
from svc.crypto import parse_inbox_key

ANSWERS = [
    "shop",  # profile
    "102290129340398",  # WABA id
    "106540352242922",  # phone number id
    "EAAGsetupAccessToken",  # access token (hidden)
    "setup-app-secret",  # app secret (hidden)
    "",  # verify token: generate
    "my-own-service-token",  # service token
    "/hooks/wa",  # webhook path
    "/v1",  # API prefix
]


def test_setup_writes_config_and_a_private_env_file(tmp_path: Path) -> None:
    target = tmp_path / "bot"
    result = CliRunner().invoke(cli, ["setup", str(target)], input="\n".join(ANSWERS) + "\n")
    assert result.exit_code == 0, result.output
    assert "wrote 2 files" in result.stdout
    assert "5 secret references, 1 token(s) and the inbox key generated" in result.stdout
    # Hidden answers are never echoed.
    assert "EAAGsetupAccessToken" not in result.output
    assert "setup-app-secret" not in result.output
    env_file = target / ".env.local"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    env = dotenv_values(env_file, interpolate=False)
    assert env["SVC_ACCESS_TOKEN"] == "EAAGsetupAccessToken"
    assert env["SVC_SERVICE_TOKEN"] == "my-own-service-token"
    assert env["SVC_VERIFY_TOKEN"].startswith("svc_vt_")
    assert len(parse_inbox_key(env["SVC_INBOX_KEY"])) == 32
    assert (env["SVC_LIVE_ENABLE"], env["SVC_YES_LIVE"]) == ("0", "0")
    config_text = (target / "svc.config.yaml").read_text()
    assert "EAAGsetupAccessToken" not in config_text
    profile = resolve_profile(load_config(target / "svc.config.yaml"), None, {}, placeholders=False)
    assert (profile.name, profile.phone_number_id, profile.waba_id) == (
        "shop",
        "106540352242922",
        "102290129340398",
    )
    assert (profile.webhook_path, profile.api_prefix) == ("/hooks/wa", "/v1")


@pytest.mark.parametrize(
    ("index", "value", "message"),
    [
        (0, "bad name!", "Profile name must be 1..32"),
        (1, "12ab", "WABA id must be a digit string"),
        (2, "+1555", "Phone number id must be a digit string"),
        (4, "x" * 4097, "App secret must be non-empty, at most 4096"),
        (7, "/healthz/../x", "Webhook path must be an absolute path"),
        (8, "api", "API prefix must be an absolute path"),
    ],
)
def test_setup_refuses_a_bad_answer_and_writes_nothing(
    tmp_path: Path, index: int, value: str, message: str
) -> None:
    answers = list(ANSWERS)
    answers[index] = value
    result = CliRunner().invoke(cli, ["setup", str(tmp_path)], input="\n".join(answers) + "\n")
    assert result.exit_code == 1
    assert message in result.output
    assert value not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_setup_profile_flag_skips_its_prompt(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["setup", str(tmp_path), "--profile", "cli_given"], input="\n".join(ANSWERS[1:]) + "\n"
    )
    assert result.exit_code == 0, result.output
    assert "defaultProfile: cli_given" in (tmp_path / "svc.config.yaml").read_text()


def test_a_failed_second_write_rolls_back_the_first(tmp_path: Path) -> None:
    calls: list[Path] = []

    def writer(path: Path, data: bytes, mode: int) -> None:
        if calls:
            raise OSError("disk full")
        calls.append(path)
        path.write_bytes(data)

    with pytest.raises(SetupInputError):
        write_setup_files(
            [(tmp_path / "svc.config.yaml", b"a", 0o644), (tmp_path / ".env.local", b"b", 0o600)],
            writer,
        )
    assert calls == [tmp_path / "svc.config.yaml"]
    assert list(tmp_path.iterdir()) == []


# Every printable string (str.isprintable: no control, separator other than space, surrogate).
PRINTABLE = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cn")), max_size=64
).filter(str.isprintable)


@given(PRINTABLE)
def test_every_printable_value_round_trips_through_python_dotenv(value: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ".env.local"
        path.write_text("# c\n" + dotenv_line("SVC_X", value) + "SVC_Y='after'\n", "utf-8")
        # Literal reading (svc's own) and python-dotenv's plain parse both give the value back.
        assert dotenv_values(path, interpolate=False) == {"SVC_X": value, "SVC_Y": "after"}


HOSTILE = [
    "a'b\"c",
    "${HOME}",
    "tok#en with spaces ",
    "back\\slash\\'",
    "$(id)`x`",
    " lead",
    "a=b",
]


def test_setup_secrets_with_quotes_and_dollar_braces_read_back_unchanged(
    tmp_path: Path,
) -> None:
    target = tmp_path / "bot"
    answers = [*ANSWERS]
    answers[3] = "EAAG'quoted\"${HOME}#x\\n"  # access token
    answers[4] = "${SVC_ACCESS_TOKEN}"  # app secret
    answers[6] = "tok#en'with'\\\\'$HOME"  # service token
    result = CliRunner().invoke(cli, ["setup", str(target)], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    env_file = target / ".env.local"
    live = live_environment(
        env_file, {"SVC_LIVE_ENABLE": "1", "SVC_YES_LIVE": "1", "HOME": "/root"}
    )
    assert live["SVC_ACCESS_TOKEN"] == answers[3]
    assert live["SVC_APP_SECRET"] == "${SVC_ACCESS_TOKEN}"
    assert live["SVC_SERVICE_TOKEN"] == answers[6]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_round_trip(tmp_path: Path, value: str) -> None:
    path = tmp_path / ".env"
    path.write_text(dotenv_line("SVC_X", value), "utf-8")
    assert dotenv_values(path, interpolate=False) == {"SVC_X": value}
