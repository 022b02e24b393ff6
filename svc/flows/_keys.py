"""The business key pair of a Flows endpoint: generate it, load the private half.

The public half is uploaded with
``PhoneNumberClient.set_business_public_key(business_public_key=...)``; the
platform then wraps each request's AES key with it (``docs/flows.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from svc import crypto

__all__ = [
    "FLOW_KEY_BITS",
    "FlowKeyPair",
    "FlowPrivateKey",
    "generate_flow_key_pair",
    "load_flow_private_key",
]

FLOW_KEY_BITS = 2048
"""RSA modulus size of a generated Flows key pair (the platform's requirement)."""

FlowPrivateKey = crypto.RsaPrivateKey
"""The loaded private key that ``decrypt_request`` and ``handle_flow_request`` take."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowKeyPair:
    """A new key pair as PEM bytes; the private half never shows in a repr."""

    private_key_pem: bytes = field(repr=False)
    """PKCS#8 (``BEGIN PRIVATE KEY``, or ``BEGIN ENCRYPTED PRIVATE KEY`` with a passphrase)."""
    public_key_pem: bytes
    """SubjectPublicKeyInfo (``BEGIN PUBLIC KEY``): what ``set_business_public_key`` uploads."""
    encrypted: bool
    """Whether ``private_key_pem`` is passphrase-protected."""

    @property
    def public_key_text(self) -> str:
        """The public key as text, ready for ``set_business_public_key``."""
        return self.public_key_pem.decode("ascii")


def generate_flow_key_pair(passphrase: bytes | None = None) -> FlowKeyPair:
    """Make a new RSA-2048 key pair for a Flows endpoint (CPU work, done once per endpoint).

    With ``passphrase`` the private key is encrypted (PKCS#8, cryptography's
    best available scheme); keep the file mode 0600 either way.
    """
    if passphrase is not None and not isinstance(passphrase, bytes):
        raise TypeError("passphrase must be bytes or None")
    private_pem, public_pem = crypto.generate_rsa_key_pair_pem(
        key_size=FLOW_KEY_BITS, passphrase=passphrase
    )
    return FlowKeyPair(
        private_key_pem=private_pem, public_key_pem=public_pem, encrypted=passphrase is not None
    )


def load_flow_private_key(pem: bytes, passphrase: bytes | None = None) -> FlowPrivateKey:
    """Load the endpoint's private key once, at start-up (PEM PKCS#8, optional passphrase).

    Raises ``ValueError`` with a fixed message (never the PEM or the
    passphrase) when the key cannot be read, is not RSA or is under 2048 bits.
    """
    if not isinstance(pem, bytes | bytearray | memoryview):
        raise TypeError("pem must be bytes")
    if passphrase is not None and not isinstance(passphrase, bytes | bytearray | memoryview):
        raise TypeError("passphrase must be bytes or None")
    return crypto.load_rsa_private_key_pem(pem, passphrase)
