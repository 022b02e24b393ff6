"""The running local service as ``svc messages`` and ``svc broadcast`` reach it.

Its address is the profile's host and port (or ``--url``); its bearer is the
profile's ``serviceBearerToken`` env reference, read from ``--env-file`` and the
process environment. The bearer travels only in the ``Authorization`` header and
is never printed; a refusal names the status, the error code and, when it is
short plain text, the service's sentence.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import click

from svc._text import is_printable_ascii

from ._errors import CliUsageError, MessagesError

if TYPE_CHECKING:
    import httpx

__all__ = ["SERVICE_OPTIONS", "LocalService", "environment", "service_endpoint"]

SERVICE_OPTIONS: Final = (
    click.option("--profile", metavar="NAME"),
    click.option("--env-file", metavar="FILE", help="Relative dotenv file with the token."),
    click.option("--url", metavar="URL", help="Service URL (default: the config's)."),
    click.option("--json", "as_json", is_flag=True, help="Print the raw JSON."),
)
"""The options after ``--config`` of a command that asks the running service: the profile,
where its bearer is read, its address, and raw JSON output."""


def environment(env_file: str | None) -> dict[str, str]:
    """The process environment, over ``--env-file``'s values when one is given."""
    from ._config import read_env_file

    if env_file is None:
        return dict(os.environ)
    return read_env_file(env_file, os.environ)


def service_endpoint(
    config_path: str, profile: str | None, env_file: str | None, url: str | None
) -> tuple[str, str]:
    """The running service of a profile: its API base URL (prefix included) and its bearer.

    The bearer is read from the env file (literally) or the environment and never printed;
    ``url`` (else the profile's host and port) must be http(s) without credentials.
    """
    import httpx

    from ._config import load_config, resolve_profile

    loaded = load_config(config_path)
    environ = environment(env_file)
    resolved = resolve_profile(loaded, profile, environ, placeholders=True)
    _, section = loaded.section(profile)
    token_name = section.secrets.serviceBearerToken.env
    token = environ.get(token_name)
    if not token:
        raise MessagesError(f"{token_name} is not set (env file or environment).")
    base = url if url is not None else _default_url(resolved.host, resolved.port)
    try:
        parsed = httpx.URL(base)
    except httpx.InvalidURL:
        raise CliUsageError("--url must be an http(s) URL.") from None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host or parsed.userinfo:
        raise CliUsageError("--url must be an http(s) URL without credentials.")
    return base.rstrip("/") + resolved.api_prefix, token


class LocalService:
    """Requests to the running service of a profile over one connection pool; ``with`` closes it."""

    def __init__(
        self,
        config_path: str,
        profile: str | None,
        env_file: str | None,
        url: str | None,
        *,
        timeout: float,
    ) -> None:
        import httpx

        self._base, token = service_endpoint(config_path, profile, env_file, url)
        self._headers = {"Authorization": f"Bearer {token}"}
        self._client = httpx.Client(timeout=timeout)

    def __enter__(self) -> LocalService:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._client.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: object = None,
        headers: Mapping[str, str] | None = None,
        ok: tuple[int, ...] = (200,),
    ) -> Any:
        """The JSON answer of ``method path`` (below the API prefix); any other status refuses."""
        import httpx

        try:
            response = self._client.request(
                method,
                self._base + path,
                params=query,
                json=body,
                headers={**self._headers, **(headers or {})},
            )
        except (httpx.HTTPError, UnicodeError):  # UnicodeError: a host the IDNA codec refuses
            raise MessagesError(
                "the service cannot be reached (is `svc serve` running?)."
            ) from None
        if response.status_code not in ok:
            raise MessagesError(_refusal(response))
        try:
            return response.json()
        except ValueError:
            raise MessagesError("the service answered with something that is not JSON.") from None


def _refusal(response: httpx.Response) -> str:
    code, said = "unknown", ""
    with contextlib.suppress(ValueError, KeyError, TypeError):
        error = response.json()["error"]
        code = str(error["code"])
        said = str(error.get("message", ""))
    if not code.replace("_", "").isalnum():
        code = "unknown"
    # The service's sentence is fixed text; anything else (another server) is left out.
    said = f": {said}" if said and len(said) <= 200 and is_printable_ascii(said) else "."
    return f"the service answered {response.status_code} ({code}){said}"


def _default_url(host: str, port: int) -> str:
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - a listen-all address, reached locally
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"
