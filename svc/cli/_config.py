"""The config file (decisions.md section 2): parsed, checked against a pydantic schema, resolved.

Structure (version 1, ``defaultProfile``, ``profiles``, the four ``{env: NAME}``
secret references, unknown keys refused) is this module's job; every field
rule of a profile is ``svc.http.Profile``'s, so the two cannot drift. Errors
name the place (``profiles.default.platform.phoneNumberId``) and never the value.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from svc._json import MAX_JSON_DEPTH, JsonTooDeepError, loads_strict
from svc.graph import DEFAULT_API_VERSION, DEFAULT_BASE_URL

from ..http import MAX_PHONE_NUMBERS, BusinessNumber, Profile, ServiceError, ServiceSecrets
from ._errors import CliConfigError, ConfigValidationError, SecretResolutionError

__all__ = [
    "ENV_NAME",
    "MAX_CONFIG_BYTES",
    "PLACEHOLDER_PHONE_NUMBER_ID",
    "PLACEHOLDER_WABA_ID",
    "ConfigDocument",
    "DryRunTokens",
    "EnvRef",
    "LoadedConfig",
    "ProfileSection",
    "dry_run_tokens",
    "load_config",
    "read_env_file",
    "resolve_profile",
    "resolve_secrets",
]

MAX_CONFIG_BYTES: Final = 1_048_576
ENV_NAME: Final = re.compile(r"[A-Z][A-Z0-9_]*")
PLACEHOLDER_PHONE_NUMBER_ID: Final = "106540352242922"
"""What a dry run uses for an env-referenced phone number id the environment does not set: the
id of the documentation's example deliveries, so they reach a dry-run service as written."""
PLACEHOLDER_WABA_ID: Final = "102290129340398"
"""What a dry run uses for an env-referenced WABA id the environment does not set."""

_SAFE_LOC = re.compile(r"[A-Za-z0-9_-]{1,64}")
_DIGITS = re.compile(r"[0-9]{1,64}")
_EnvName = Annotated[StrictStr, Field(pattern=r"^[A-Z][A-Z0-9_]{0,127}$")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EnvRef(_Model):
    """``{env: NAME}``: the value comes from the environment (or the env file in live mode)."""

    env: _EnvName


class PhoneNumberSection(_Model):
    """One more business number of the profile: its id, and its WABA and token when they differ."""

    phoneNumberId: StrictStr | EnvRef
    wabaId: StrictStr | EnvRef | None = None
    accessToken: EnvRef | None = None


class PlatformSection(_Model):
    apiVersion: StrictStr = DEFAULT_API_VERSION
    baseUrl: StrictStr = DEFAULT_BASE_URL
    wabaId: StrictStr | EnvRef | None = None
    phoneNumberId: StrictStr | EnvRef
    phoneNumbers: Annotated[list[PhoneNumberSection], Field(max_length=MAX_PHONE_NUMBERS - 1)] = []


class WebhookSection(_Model):
    path: StrictStr = "/webhooks/whatsapp"
    maxBodyBytes: StrictInt = 1_048_576


class ServiceSection(_Model):
    host: StrictStr = "127.0.0.1"
    port: StrictInt = 8787
    apiPrefix: StrictStr = "/api"


class SecretsSection(_Model):
    accessToken: EnvRef
    webhookVerifyToken: EnvRef
    webhookAppSecret: EnvRef
    serviceBearerToken: EnvRef


class FlowsSection(_Model):
    path: StrictStr
    privateKey: EnvRef
    passphrase: EnvRef | None = None


MAX_INBOX_KEYS: Final = 8


class InboxSection(_Model):
    """The keys updates waiting for a handler are encrypted under: the first writes, all read."""

    keys: Annotated[list[EnvRef], Field(min_length=1, max_length=MAX_INBOX_KEYS)]


class ProfileSection(_Model):
    """One profile of the file."""

    platform: PlatformSection
    webhook: WebhookSection = WebhookSection()
    service: ServiceSection = ServiceSection()
    secrets: SecretsSection
    flows: FlowsSection | None = None
    inbox: InboxSection | None = None


class ConfigDocument(_Model):
    """The whole file."""

    version: Literal[1]
    defaultProfile: StrictStr
    profiles: Annotated[dict[StrictStr, ProfileSection], Field(min_length=1)]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedConfig:
    """A config file that passed every check, and the profile it names by default."""

    document: ConfigDocument
    format: Literal["yaml", "json"]

    @property
    def profile_names(self) -> tuple[str, ...]:
        return tuple(self.document.profiles)

    def section(self, name: str | None) -> tuple[str, ProfileSection]:
        """The named profile (default ``defaultProfile``); refuses an unknown name."""
        chosen = self.document.defaultProfile if name is None else name
        section = self.document.profiles.get(chosen)
        if section is None:
            raise ConfigValidationError(
                "the requested profile is not in the config.", field="profile"
            )
        return chosen, section

    def env_references(self, profile: str | None = None) -> tuple[str, ...]:
        """Every env name the file (or only ``profile``, when given) references, once, in order."""
        names: list[str] = []
        sections = (
            self.document.profiles.values() if profile is None else [self.section(profile)[1]]
        )
        for section in sections:
            refs: list[object] = [
                section.platform.wabaId,
                section.platform.phoneNumberId,
                section.secrets.accessToken,
                section.secrets.webhookVerifyToken,
                section.secrets.webhookAppSecret,
                section.secrets.serviceBearerToken,
            ]
            for number in section.platform.phoneNumbers:
                refs += [number.phoneNumberId, number.wabaId, number.accessToken]
            if section.flows is not None:
                refs += [section.flows.privateKey, section.flows.passphrase]
            if section.inbox is not None:
                refs += section.inbox.keys
            for ref in refs:
                if isinstance(ref, EnvRef) and ref.env not in names:
                    names.append(ref.env)
        return tuple(names)


_REASONS: Final = {
    "missing": "is required",
    "extra_forbidden": "is not a known key",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "literal_error": "has an unsupported value",
    "string_pattern_mismatch": "must be an upper-case env name ([A-Z][A-Z0-9_]*)",
    "too_short": "must not be empty",
    "too_long": "has too many items",
    "list_type": "must be a list",
    "model_type": "must be a mapping",
    "dict_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
}

_FIELD_KEYS: Final = {
    "phone_number_id": "platform.phoneNumberId",
    "waba_id": "platform.wabaId",
    "api_version": "platform.apiVersion",
    "base_url": "platform.baseUrl",
    "webhook_path": "webhook.path",
    "max_body_bytes": "webhook.maxBodyBytes",
    "api_prefix": "service.apiPrefix",
    "host": "service.host",
    "port": "service.port",
    "flows_path": "flows.path",
    "phone_numbers": "platform.phoneNumbers",
}


def _place(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        text = str(part)
        # Union members show up as model names in the location; they are not keys.
        if text in ("str", "EnvRef", "constrained-str", "function-after[...]"):
            continue
        parts.append(text if _SAFE_LOC.fullmatch(text) else "<key>")
    return ".".join(parts) or "<root>"


_MAPPING_TYPES: Final = frozenset({"model_type", "dict_type", "model_attributes_type"})
_LITERAL_REFUSED: Final = (
    "a secret is written {env: NAME} (e.g. {env: SVC_ACCESS_TOKEN}); "
    "a literal secret is refused on purpose, so it never lands in a config file"
)


def _is_secret_place(loc: tuple[int | str, ...]) -> bool:
    """``profiles.<name>.secrets.<key>``, ``profiles.<name>.flows.privateKey|passphrase`` or
    ``profiles.<name>.inbox.keys.<n>``."""
    return len(loc) >= 4 and (
        loc[2] in ("secrets", "inbox")
        or (loc[2] == "flows" and loc[3] in ("privateKey", "passphrase"))
    )


def _schema_problems(error: ValidationError) -> list[str]:
    problems: list[str] = []
    for item in error.errors(include_url=False, include_input=False):
        reason = _REASONS.get(item["type"], "is invalid")
        if item["type"] in _MAPPING_TYPES and _is_secret_place(item["loc"]):
            reason = _LITERAL_REFUSED
        line = f"{_place(item['loc'])}: {reason}"
        if line not in problems:
            problems.append(line)
    return problems


def _read_regular_file(path: Path) -> bytes:
    """The file's first ``MAX_CONFIG_BYTES + 1`` bytes. Opened without blocking and judged
    once open, so a FIFO or a device is refused instead of waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError
        if not stat.S_ISREG(mode):
            raise CliConfigError("the config path is not a regular file.")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        return handle.read(MAX_CONFIG_BYTES + 1)


def _read(path: Path) -> tuple[object, Literal["yaml", "json"]]:
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise CliConfigError("the config file name must end in .yaml, .yml or .json.")
    try:
        raw = _read_regular_file(path)
    except FileNotFoundError:
        raise CliConfigError("the config file does not exist.") from None
    except IsADirectoryError:
        raise CliConfigError("the config path is a directory, not a file.") from None
    except OSError:
        raise CliConfigError("the config file cannot be read.") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise CliConfigError("the config file is larger than 1 MiB.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CliConfigError("the config file is not UTF-8 text.") from None
    if suffix == ".json":
        try:
            return loads_strict(text), "json"
        except json.JSONDecodeError as exc:
            raise CliConfigError(
                f"the config file is not valid JSON (line {exc.lineno})."
            ) from None
        except JsonTooDeepError:
            raise CliConfigError(
                f"the config file nests deeper than {MAX_JSON_DEPTH} levels."
            ) from None
        except ValueError:
            raise CliConfigError("the config file holds a number JSON cannot read.") from None
    try:
        return yaml.safe_load(text), "yaml"
    except RecursionError:
        raise CliConfigError("the config file nests too deeply.") from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else 0
        raise CliConfigError(f"the config file is not valid YAML (line {line}).") from None
    except yaml.YAMLError:
        raise CliConfigError("the config file is not valid YAML.") from None


def parse_document(data: object) -> ConfigDocument:
    """Check a parsed file against the schema and every profile against ``Profile``."""
    if not isinstance(data, Mapping):
        raise ConfigValidationError("the config file must hold a mapping at the top level.")
    try:
        document = ConfigDocument.model_validate(data)
    except ValidationError as exc:
        problems = _schema_problems(exc)
        raise ConfigValidationError(
            f"the config file has {len(problems)} problem(s):\n  - " + "\n  - ".join(problems)
        ) from None
    if document.defaultProfile not in document.profiles:
        raise ConfigValidationError(
            "defaultProfile: must name one of the profiles.", field="defaultProfile"
        )
    for name, section in document.profiles.items():
        _build_profile(name, section, {}, placeholders=True)
    return document


def load_config(path: str | Path) -> LoadedConfig:
    """Read, parse and check a config file; raises ``CliConfigError``/``ConfigValidationError``."""
    data, fmt = _read(Path(path))
    return LoadedConfig(document=parse_document(data), format=fmt)


def _resolve_id(
    value: str | EnvRef | None,
    env: Mapping[str, str],
    *,
    placeholder: str | None,
) -> str | None:
    if value is None or isinstance(value, str):
        return value
    found = env.get(value.env)
    if found is None or found == "":
        if placeholder is not None:
            return placeholder
        raise SecretResolutionError(f"{value.env} is not set.", field=value.env)
    if not _DIGITS.fullmatch(found):
        raise SecretResolutionError(f"{value.env} must be a digit string.", field=value.env)
    return found


def _number_placeholder(index: int) -> str:
    """A distinct placeholder id for the ``index``-th extra number of a dry run."""
    return str(int(PLACEHOLDER_PHONE_NUMBER_ID) + 100 + index)


def _business_numbers(
    platform: PlatformSection, env: Mapping[str, str], *, placeholders: bool
) -> tuple[BusinessNumber, ...]:
    return tuple(
        BusinessNumber(
            phone_number_id=_resolve_id(
                number.phoneNumberId,
                env,
                placeholder=_number_placeholder(index) if placeholders else None,
            )
            or "",
            waba_id=_resolve_id(
                number.wabaId, env, placeholder=PLACEHOLDER_WABA_ID if placeholders else None
            ),
        )
        for index, number in enumerate(platform.phoneNumbers)
    )


def _build_profile(
    name: str, section: ProfileSection, env: Mapping[str, str], *, placeholders: bool
) -> Profile:
    platform = section.platform
    try:
        return Profile(
            name=name,
            phone_number_id=_resolve_id(
                platform.phoneNumberId,
                env,
                placeholder=PLACEHOLDER_PHONE_NUMBER_ID if placeholders else None,
            )
            or "",
            waba_id=_resolve_id(
                platform.wabaId, env, placeholder=PLACEHOLDER_WABA_ID if placeholders else None
            ),
            api_version=platform.apiVersion,
            base_url=platform.baseUrl,
            webhook_path=section.webhook.path,
            max_body_bytes=section.webhook.maxBodyBytes,
            api_prefix=section.service.apiPrefix,
            host=section.service.host,
            port=section.service.port,
            flows_path=section.flows.path if section.flows is not None else None,
            phone_numbers=_business_numbers(platform, env, placeholders=placeholders),
        )
    except ServiceError as exc:
        where = "profiles.<key>" if not _SAFE_LOC.fullmatch(name) else f"profiles.{name}"
        if exc.field == "name":
            raise ConfigValidationError(
                f"{where}: a profile name must be 1..32 letters, digits, '_' or '-'.",
                field="profile",
            ) from None
        key = _FIELD_KEYS.get(exc.field or "", exc.field or "")
        raise ConfigValidationError(f"{where}.{key}: {exc.message}", field=key) from None


def resolve_profile(
    config: LoadedConfig,
    name: str | None,
    env: Mapping[str, str],
    *,
    placeholders: bool,
) -> Profile:
    """The named profile as a ``Profile``; env-referenced ids come from ``env``.

    With ``placeholders`` (dry runs, offline checks) an id the environment does
    not set becomes a fixed placeholder digit string; without it (live mode)
    a missing id is a ``SecretResolutionError``.
    """
    chosen, section = config.section(name)
    return _build_profile(chosen, section, env, placeholders=placeholders)


def resolve_secrets(section: ProfileSection, env: Mapping[str, str]) -> ServiceSecrets:
    """The four secrets from ``env``, and the access tokens of the numbers that have their own.

    A missing or malformed one names its env name only.
    """
    values = _service_secrets(section.secrets, env)
    tokens = _number_tokens(section, env)
    try:
        return ServiceSecrets(**values, phone_number_tokens={k: v for k, (v, _) in tokens.items()})
    except ServiceError:
        _raise_bad_token(values, tokens)
        raise SecretResolutionError(
            "a number's own access token must be 1..4096 visible ASCII characters."
        ) from None


def _service_secrets(refs: SecretsSection, env: Mapping[str, str]) -> dict[str, str]:
    """The four service secrets from ``env`` by ``ServiceSecrets``' field, each checked by its
    rule; a missing or malformed one names its env name only."""
    names = {
        "access_token": refs.accessToken.env,
        "webhook_verify_token": refs.webhookVerifyToken.env,
        "webhook_app_secret": refs.webhookAppSecret.env,
        "service_bearer_token": refs.serviceBearerToken.env,
    }
    values: dict[str, str] = {}
    for field, name in names.items():
        value = env.get(name)
        if value is None or value == "":
            raise SecretResolutionError(f"{name} is not set.", field=name)
        values[field] = value
    try:
        ServiceSecrets(**values, phone_number_tokens={})
    except ServiceError as exc:
        ref_name = names.get(exc.field or "", "a secret")
        raise SecretResolutionError(
            f"{ref_name} must be 1..4096 visible ASCII characters.", field=ref_name
        ) from None
    return values


def read_env_file(value: str, environ: Mapping[str, str]) -> dict[str, str]:
    """``--env-file`` (a relative local name) overlaid by ``environ``, which wins; no gate check."""
    from ._inputs import check_env_file_name, env_file_environment

    return env_file_environment(check_env_file_name(value), environ)


@dataclass(frozen=True, slots=True, kw_only=True)
class DryRunTokens:
    """The three tokens a dry run serves with; ``generated`` names those made fresh (printed)."""

    service_bearer_token: str
    webhook_verify_token: str
    webhook_app_secret: str
    generated: tuple[str, ...]
    from_env: tuple[str, ...]


def dry_run_tokens(section: ProfileSection, environ: Mapping[str, str]) -> DryRunTokens:
    """Each token from its env name when ``environ`` sets it, else generated (issue 26 item 10).

    A token taken from the environment (or ``--env-file``) is the user's own and
    is never printed; a generated one is, once, so callers can use it.
    """
    from ._tokens import generate_app_secret, generate_service_token, generate_verify_token

    refs = section.secrets
    values: dict[str, str] = {}
    generated: list[str] = []
    from_env: list[str] = []
    for key, ref, make in (
        ("serviceBearerToken", refs.serviceBearerToken, generate_service_token),
        ("webhookVerifyToken", refs.webhookVerifyToken, generate_verify_token),
        ("webhookAppSecret", refs.webhookAppSecret, generate_app_secret),
    ):
        found = environ.get(ref.env)
        if found:
            values[key] = found
            from_env.append(ref.env)
        else:
            values[key] = make()
            generated.append(key)
    # The same rules as live secrets: a malformed value names its env name only. A number's
    # own token is not checked: a dry run's access token is synthetic.
    _service_secrets(
        refs,
        {
            refs.accessToken.env: "dryrun-access-token",
            refs.serviceBearerToken.env: values["serviceBearerToken"],
            refs.webhookVerifyToken.env: values["webhookVerifyToken"],
            refs.webhookAppSecret.env: values["webhookAppSecret"],
        },
    )
    return DryRunTokens(
        service_bearer_token=values["serviceBearerToken"],
        webhook_verify_token=values["webhookVerifyToken"],
        webhook_app_secret=values["webhookAppSecret"],
        generated=tuple(generated),
        from_env=tuple(from_env),
    )


def config_summary(config: LoadedConfig) -> dict[str, Any]:
    """Counts only (for ``config validate``): profiles, env references, optional sections."""
    profiles = config.document.profiles
    return {
        "profiles": len(profiles),
        "envReferences": len(config.env_references()),
        "flowsProfiles": sum(1 for s in profiles.values() if s.flows is not None),
    }


def _number_tokens(section: ProfileSection, env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Each own access token by phone number id, with its env name (for error messages)."""
    tokens: dict[str, tuple[str, str]] = {}
    for number in section.platform.phoneNumbers:
        if number.accessToken is None:
            continue
        phone_number_id = _resolve_id(number.phoneNumberId, env, placeholder=None) or ""
        value = env.get(number.accessToken.env)
        if value is None or value == "":
            raise SecretResolutionError(
                f"{number.accessToken.env} is not set.", field=number.accessToken.env
            )
        tokens[phone_number_id] = (value, number.accessToken.env)
    return tokens


def _raise_bad_token(values: Mapping[str, str], tokens: Mapping[str, tuple[str, str]]) -> None:
    """Name the env of the first own token ``ServiceSecrets`` refuses (its rule, not a copy)."""
    for phone_number_id, (value, env_name) in tokens.items():
        try:
            ServiceSecrets(**values, phone_number_tokens={phone_number_id: value})
        except ServiceError:
            raise SecretResolutionError(
                f"{env_name} must be 1..4096 visible ASCII characters.", field=env_name
            ) from None
