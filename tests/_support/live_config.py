"""A live project on disk: ``svc.config.json`` aimed at a Graph URL, and an env file of secrets."""

from __future__ import annotations

import base64
import json
import secrets as token
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PHONE_ID = "106540352242922"
WABA_ID = "102290129340398"


@dataclass(frozen=True, kw_only=True)
class Project:
    """A directory with a live config and its secrets (under their environment names)."""

    root: Path
    secrets: dict[str, str]
    env_file: str = ".env.live"

    @property
    def bearer(self) -> str:
        return self.secrets["SVC_SERVICE_TOKEN"]

    def live_args(self) -> list[str]:
        return ["--config", "svc.config.json", "--live", "--yes-live", "--env-file", self.env_file]

    def dry_args(self) -> list[str]:
        return ["--config", "svc.config.json", "--dry-run"]

    def used(self) -> dict[str, str]:
        """The four secrets under the names ``ServeProcess.secrets`` uses."""
        return {
            "accessToken": self.secrets["SVC_ACCESS_TOKEN"],
            "webhookVerifyToken": self.secrets["SVC_VERIFY_TOKEN"],
            "webhookAppSecret": self.secrets["SVC_APP_SECRET"],
            "serviceBearerToken": self.secrets["SVC_SERVICE_TOKEN"],
        }


def make_project(
    root: Path,
    graph_url: str = "http://127.0.0.1:9",
    *,
    secrets: Mapping[str, str] | None = None,
    env_file: str = ".env.live",
    yes_live: bool = True,
    inbox_key: bool = True,
) -> Project:
    """Write ``svc.config.json`` and ``env_file`` under ``root``.

    The four secrets are fresh distinctive values unless ``secrets`` names them;
    ``yes_live=False`` leaves the second live gate closed in the file; ``inbox_key=False``
    names no inbox key (handlers over a store then refuse to start).
    """
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "version": 1,
        "defaultProfile": "main",
        "profiles": {
            "main": {
                "platform": {
                    "baseUrl": graph_url,
                    "wabaId": {"env": "SVC_WABA_ID"},
                    "phoneNumberId": {"env": "SVC_PHONE_NUMBER_ID"},
                },
                "secrets": {
                    "accessToken": {"env": "SVC_ACCESS_TOKEN"},
                    "webhookVerifyToken": {"env": "SVC_VERIFY_TOKEN"},
                    "webhookAppSecret": {"env": "SVC_APP_SECRET"},
                    "serviceBearerToken": {"env": "SVC_SERVICE_TOKEN"},
                },
            }
        },
    }
    if inbox_key:
        profiles: dict[str, dict[str, object]] = config["profiles"]  # type: ignore[assignment]
        profiles["main"]["inbox"] = {"keys": [{"env": "SVC_INBOX_KEY"}]}
    (root / "svc.config.json").write_text(json.dumps(config))
    values = (
        dict(secrets)
        if secrets is not None
        else {
            "SVC_ACCESS_TOKEN": "EAAGrel" + token.token_hex(12),
            "SVC_VERIFY_TOKEN": "relverify" + token.token_hex(12),
            "SVC_APP_SECRET": "relappsecret" + token.token_hex(12),
            "SVC_SERVICE_TOKEN": "relbearer" + token.token_hex(12),
        }
    )
    lines = [f"{k}={v}" for k, v in values.items()]
    lines += [f"SVC_PHONE_NUMBER_ID={PHONE_ID}", f"SVC_WABA_ID={WABA_ID}"]
    lines += ["SVC_LIVE_ENABLE=1", f"SVC_YES_LIVE={int(yes_live)}"]
    if inbox_key:
        lines += ["SVC_INBOX_KEY=" + base64.b64encode(token.token_bytes(32)).decode()]
    (root / env_file).write_text("\n".join(lines) + "\n")
    return Project(root=root, secrets=values, env_file=env_file)
