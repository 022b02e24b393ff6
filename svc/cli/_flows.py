"""``svc flows keygen`` and the Flows key material ``svc serve --flow-handler`` reads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ._errors import ConfigValidationError, OutputError, SecretResolutionError

__all__ = ["UPLOAD_SNIPPET", "flows", "flows_key_material"]

_PRIVATE_NAME = "flows_private_key.pem"
_PUBLIC_NAME = "flows_public_key.pem"


@click.group()
def flows() -> None:
    """WhatsApp Flows endpoint helpers."""


@flows.command()
@click.option("--out-dir", default=".", metavar="DIR", help="Folder for the two PEM files.")
def keygen(out_dir: str) -> None:
    """Write a new RSA-2048 key pair for a Flows endpoint (private key mode 0600)."""
    from ..flows import generate_flow_key_pair
    from ._inputs import check_out_path, write_exclusive

    folder = Path(out_dir)
    if not folder.is_dir():
        if folder.exists() or folder.is_symlink():
            raise OutputError("--out-dir exists and is not a folder.")
        try:
            folder.mkdir(mode=0o700, parents=True)
            folder.chmod(0o700)  # the umask may have narrowed the mode mkdir was given
        except OSError:
            raise OutputError("--out-dir cannot be created.") from None
    private_path = check_out_path(str(folder / _PRIVATE_NAME))
    public_path = check_out_path(str(folder / _PUBLIC_NAME))
    pair = generate_flow_key_pair()
    write_exclusive(private_path, pair.private_key_pem, mode=0o600)
    try:
        write_exclusive(public_path, pair.public_key_pem)
    except OutputError:
        private_path.unlink(missing_ok=True)
        raise
    click.echo(f"wrote 2 files: {_PRIVATE_NAME} (mode 0600) and {_PUBLIC_NAME}")
    click.echo("")
    click.echo(pair.public_key_text.rstrip("\n"))
    click.echo("")
    click.echo("Upload the public key once per phone number (Python; OUT_DIR is --out-dir):")
    click.echo("")
    click.echo(UPLOAD_SNIPPET)
    click.echo("Keep the private key secret; serve reads it from the env name in flows.privateKey.")


UPLOAD_SNIPPET = f"""\
from pathlib import Path

from svc.graph import GraphClient, PhoneNumberClient


async def upload_flows_public_key(access_token: str, phone_number_id: str) -> None:
    public_key = (Path("OUT_DIR") / "{_PUBLIC_NAME}").read_text()
    async with GraphClient(access_token=access_token) as client:
        phone = PhoneNumberClient(client, phone_number_id=phone_number_id)
        await phone.set_business_public_key(business_public_key=public_key)
"""
"""What ``keygen`` prints after the key: valid Python (a test compiles and runs it)."""


def flows_key_material(
    section: Any, profile: Any, environ: Mapping[str, str]
) -> dict[str, bytes | None]:
    """The private key PEM (and passphrase) the profile's ``flows`` section references."""
    flows_section = section.flows
    if flows_section is None or profile.flows_path is None:
        raise ConfigValidationError(
            "--flow-handler needs a flows section (path, privateKey) in the profile.",
            field="flows",
        )
    pem = environ.get(flows_section.privateKey.env)
    if not pem:
        raise SecretResolutionError(
            f"{flows_section.privateKey.env} is not set.", field=flows_section.privateKey.env
        )
    passphrase: bytes | None = None
    if flows_section.passphrase is not None:
        value = environ.get(flows_section.passphrase.env)
        if not value:
            raise SecretResolutionError(
                f"{flows_section.passphrase.env} is not set.", field=flows_section.passphrase.env
            )
        passphrase = value.encode("utf-8")
    return {"flows_private_key_pem": pem.encode("utf-8"), "flows_passphrase": passphrase}
