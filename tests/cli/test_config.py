"""The config file: schema, the rules of ``svc.http.Profile``, env resolution, safe errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from svc.cli import CliConfigError, ConfigValidationError, SecretResolutionError
from svc.cli._config import (
    PLACEHOLDER_PHONE_NUMBER_ID,
    PLACEHOLDER_WABA_ID,
    load_config,
    parse_document,
    resolve_profile,
    resolve_secrets,
)
from svc.cli._init import config_data


def _doc(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(config_data("default")))
    profile = data["profiles"]["default"]
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        target = profile
        for part in parents:
            target = target[part]
        target[last] = value
    return data


def _write(tmp_path: Path, data: object, name: str = "svc.config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_the_init_config_loads_with_placeholders_for_unset_ids(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, _doc()))
    profile = resolve_profile(loaded, None, {}, placeholders=True)
    assert profile.phone_number_id == PLACEHOLDER_PHONE_NUMBER_ID
    assert profile.waba_id == PLACEHOLDER_WABA_ID
    assert (profile.host, profile.port, profile.api_prefix) == ("127.0.0.1", 8787, "/api")
    env_profile = resolve_profile(
        loaded, "default", {"SVC_PHONE_NUMBER_ID": "106540352242922"}, placeholders=True
    )
    assert env_profile.phone_number_id == "106540352242922"


def test_cli_md_names_the_placeholder_ids_of_a_dry_run() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    said = f"`{PLACEHOLDER_PHONE_NUMBER_ID}` (phone number) and `{PLACEHOLDER_WABA_ID}` (WABA)"
    assert said in " ".join(page.split())


def test_live_resolution_needs_every_id_and_secret(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, _doc()))
    with pytest.raises(SecretResolutionError) as caught:
        resolve_profile(loaded, None, {}, placeholders=False)
    assert caught.value.format_message() == "SVC_PHONE_NUMBER_ID is not set."
    with pytest.raises(SecretResolutionError) as bad_id:
        resolve_profile(loaded, None, {"SVC_PHONE_NUMBER_ID": "12ab-secretish"}, placeholders=False)
    assert "12ab" not in str(bad_id.value)
    _, section = loaded.section(None)
    env = {
        "SVC_ACCESS_TOKEN": "EAAGa",
        "SVC_VERIFY_TOKEN": "v",
        "SVC_APP_SECRET": "bad secret with spaces",
        "SVC_SERVICE_TOKEN": "s",
    }
    with pytest.raises(SecretResolutionError) as bad_secret:
        resolve_secrets(section, env)
    assert bad_secret.value.format_message() == (
        "SVC_APP_SECRET must be 1..4096 visible ASCII characters."
    )
    assert "spaces" not in repr(bad_secret.value) + str(bad_secret.value)
    env["SVC_APP_SECRET"] = "fine"
    assert resolve_secrets(section, env).values() == ("EAAGa", "v", "fine", "s")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({**_doc(), "version": 2}, "version: has an unsupported value"),
        ({**_doc(), "extra": 1}, "extra: is not a known key"),
        (_doc(secrets__accessToken="EAAGliteral"), "secrets.accessToken: a secret is written {env"),
        (_doc(secrets__accessToken={"env": "lower"}), "secrets.accessToken.env: must be an upper"),
        (_doc(platform__phoneNumberId=106540352242922), "platform.phoneNumberId"),
        (_doc(webhook__maxBodyBytes="big"), "webhook.maxBodyBytes: must be an integer"),
        (_doc(webhook__path="/healthz"), "webhook.path: webhook_path collides with a built-in"),
        (_doc(service__apiPrefix="api"), "service.apiPrefix: api_prefix must be an absolute"),
        (_doc(platform__baseUrl="ftp://x"), "platform.baseUrl: base_url must be an http(s) URL"),
        (_doc(platform__apiVersion="25"), "platform.apiVersion: api_version must look like"),
        (_doc(service__port=70000), "service.port: port must be an integer 0..65535"),
        ({**_doc(), "defaultProfile": "other"}, "defaultProfile: must name one of the profiles"),
        ({**_doc(), "profiles": {}}, "profiles: must not be empty"),
        ([1, 2], "must hold a mapping at the top level"),
    ],
)
def test_invalid_files_name_the_place_never_the_value(data: object, message: str) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        parse_document(data)
    text = caught.value.format_message()
    assert message in text
    assert "EAAGliteral" not in text
    assert "ftp://x" not in text


def test_a_bad_profile_name_is_refused() -> None:
    data = _doc()
    data["profiles"] = {"bad name!": data["profiles"]["default"]}
    data["defaultProfile"] = "bad name!"
    with pytest.raises(ConfigValidationError) as caught:
        parse_document(data)
    assert "profiles.<key>" in caught.value.format_message()
    assert "bad name" not in caught.value.format_message()


def test_unreadable_files_give_a_safe_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("version: [1\n  secretline: EAAG\n")
    with pytest.raises(CliConfigError, match=r"not valid YAML \(line \d+\)"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "a.json").write_text("{nope")
    with pytest.raises(CliConfigError, match=r"not valid JSON \(line 1\)"):
        load_config(tmp_path / "a.json")
    (tmp_path / "a.toml").write_text("")
    with pytest.raises(CliConfigError, match=r"must end in \.yaml, \.yml or \.json"):
        load_config(tmp_path / "a.toml")
    with pytest.raises(CliConfigError, match="is a directory"):
        load_config(tmp_path / "dir.yaml" if (tmp_path / "dir.yaml").mkdir() is None else "")


def test_a_fifo_named_as_a_config_is_refused_without_waiting_for_a_writer(
    tmp_path: Path,
) -> None:
    """Opening a FIFO for reading waits for a writer: the file is opened without blocking and
    judged once open, so the command refuses it at once."""
    import os

    os.mkfifo(tmp_path / "pipe.yaml")
    with pytest.raises(CliConfigError, match="not a regular file"):
        load_config(tmp_path / "pipe.yaml")


def test_a_file_of_1_mib_loads_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    from svc.cli._init import render_config

    text = render_config(config_data("main"), "yaml")
    padding = 1_048_576 - len(text.encode()) - 2
    (tmp_path / "c.yaml").write_text(text + "#" + "x" * padding + "\n")
    assert (tmp_path / "c.yaml").stat().st_size == 1_048_576
    assert load_config(tmp_path / "c.yaml").profile_names == ("main",)
    (tmp_path / "c.yaml").write_text(text + "#" + "x" * (padding + 1) + "\n")
    with pytest.raises(CliConfigError) as caught:
        load_config(tmp_path / "c.yaml")
    assert caught.value.format_message() == "the config file is larger than 1 MiB."


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("a.yaml", b"version: 1\nx: \xff\xfe\n", "the config file is not UTF-8 text."),
        ("a.yaml", b"x: " + b"[" * 20_000, "the config file nests too deeply."),
        ("a.json", b"[" * 20_000, "the config file nests deeper than 64 levels."),
        ("a.json", b'{"version": 1e999999}', "the config file holds a number JSON cannot read."),
        ("a.yaml", b"x: !!python/object/apply:os.system [id]\n", "not valid YAML (line 1)."),
    ],
)
def test_hostile_files_are_refused_with_one_sentence(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(CliConfigError) as caught:
        load_config(tmp_path / name)
    assert caught.value.format_message().endswith(message)


def test_yaml_and_json_give_the_same_document(tmp_path: Path) -> None:
    from svc.cli._init import render_config

    (tmp_path / "c.yaml").write_text(render_config(config_data("main"), "yaml"))
    (tmp_path / "c.json").write_text(render_config(config_data("main"), "json"))
    assert load_config(tmp_path / "c.yaml").document == load_config(tmp_path / "c.json").document


def test_an_unknown_profile_is_refused(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, _doc()))
    with pytest.raises(ConfigValidationError, match="requested profile is not in the config"):
        resolve_profile(loaded, "nope", {}, placeholders=True)


# --- several business numbers

_NUMBERS = [
    {"phoneNumberId": "106540352249999", "wabaId": "102290129349999"},
    {"phoneNumberId": {"env": "SVC_THIRD_NUMBER_ID"}, "accessToken": {"env": "SVC_THIRD_TOKEN"}},
]
_LIVE_ENV = {
    "SVC_PHONE_NUMBER_ID": "106540352242922",
    "SVC_WABA_ID": "102290129340398",
    "SVC_THIRD_NUMBER_ID": "106540352248888",
    "SVC_ACCESS_TOKEN": "EAAGshared",
    "SVC_VERIFY_TOKEN": "v",
    "SVC_APP_SECRET": "a",
    "SVC_SERVICE_TOKEN": "s",
    "SVC_THIRD_TOKEN": "EAAGthird",
}


def test_a_profile_lists_several_numbers_with_own_waba_and_token(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, _doc(platform__phoneNumbers=_NUMBERS)))
    assert {"SVC_THIRD_NUMBER_ID", "SVC_THIRD_TOKEN"} <= set(loaded.env_references())
    profile = resolve_profile(loaded, None, _LIVE_ENV, placeholders=False)
    assert profile.phone_number_id == "106540352242922"
    assert [(n.phone_number_id, n.waba_id) for n in profile.phone_numbers] == [
        ("106540352249999", "102290129349999"),
        ("106540352248888", None),
    ]
    _, section = loaded.section(None)
    secrets = resolve_secrets(section, _LIVE_ENV)
    assert secrets.values() == ("EAAGshared", "v", "a", "s")
    assert secrets.access_token_for("106540352248888") == "EAAGthird"
    assert secrets.access_token_for("106540352249999") == "EAAGshared"
    # Dry runs: every unset id gets its own placeholder, so the numbers stay distinct.
    dry = resolve_profile(loaded, None, {}, placeholders=True)
    ids = [n.phone_number_id for n in dry.served_numbers]
    assert len(set(ids)) == 3


def test_a_profile_with_one_number_reads_as_before(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, _doc()))
    profile = resolve_profile(loaded, None, _LIVE_ENV, placeholders=False)
    assert profile.phone_numbers == ()
    _, section = loaded.section(None)
    assert dict(resolve_secrets(section, _LIVE_ENV).phone_number_tokens) == {}


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ([{"phoneNumberId": "12ab"}], "platform.phoneNumbers: phone_numbers[].phone_number_id"),
        ([{"phoneNumberId": "1", "wabaId": "x"}], "platform.phoneNumbers: phone_numbers[].waba_id"),
        ([{"phoneNumberId": "1"}, {"phoneNumberId": "1"}], "must not repeat a phone number id"),
        ([{"phoneNumberId": "1", "accessToken": "EAAGliteral"}], "accessToken: must be a mapping"),
        ([{"phoneNumberId": "1", "token": {"env": "X"}}], "token: is not a known key"),
        ({"phoneNumberId": "1"}, "platform.phoneNumbers: must be a list"),
        ([{"phoneNumberId": str(i + 1)} for i in range(64)], "has too many items"),
    ],
)
def test_bad_number_lists_name_the_place_never_the_value(numbers: object, message: str) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        parse_document(_doc(platform__phoneNumbers=numbers))
    text = caught.value.format_message()
    assert message in text
    assert "EAAGliteral" not in text and "12ab" not in text


def test_a_numbers_own_token_is_resolved_like_the_other_secrets(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, _doc(platform__phoneNumbers=_NUMBERS)))
    _, section = loaded.section(None)
    missing = {k: v for k, v in _LIVE_ENV.items() if k != "SVC_THIRD_TOKEN"}
    with pytest.raises(SecretResolutionError) as unset:
        resolve_secrets(section, missing)
    assert unset.value.format_message() == "SVC_THIRD_TOKEN is not set."
    with pytest.raises(SecretResolutionError) as bad:
        resolve_secrets(section, {**_LIVE_ENV, "SVC_THIRD_TOKEN": "has spaces in it"})
    assert bad.value.format_message() == (
        "SVC_THIRD_TOKEN must be 1..4096 visible ASCII characters."
    )
    assert "spaces" not in str(bad.value)


def test_the_serve_plan_carries_the_numbers_and_their_tokens(tmp_path: Path) -> None:
    import pickle
    from dataclasses import asdict

    from svc.cli._runtime import ServePlan

    loaded = load_config(_write(tmp_path, _doc(platform__phoneNumbers=_NUMBERS)))
    profile = resolve_profile(loaded, None, _LIVE_ENV, placeholders=False)
    _, section = loaded.section(None)
    secrets = resolve_secrets(section, _LIVE_ENV)
    plan = ServePlan(
        profile_fields=asdict(profile),
        secrets=secrets.values(),
        number_tokens=tuple(secrets.phone_number_tokens.items()),
        dry_run=False,
    )
    assert "EAAGthird" not in repr(plan)
    copy = pickle.loads(pickle.dumps(plan))  # noqa: S301 - our own plan, as spawned workers get it
    assert copy.profile() == profile
    assert copy.service_secrets().access_token_for("106540352248888") == "EAAGthird"
