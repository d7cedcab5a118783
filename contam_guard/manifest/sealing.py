"""Encryption at rest of a keyed manifest: what a manifest of format 2 holds beyond set names,
versions, item totals and file sizes is sealed with AES-256-GCM.

The key is derived from the secret (``CONTAM_GUARD_KEY``) with HKDF-SHA-256 and a random salt
recorded in the index (drawn once, by ``init --keyed`` or ``upgrade``), independently of the
keys the hashes are keyed with. Every data file and each set's metadata (golden file paths,
fields, id field, rules) is sealed with associated data naming what it is (its path in the
manifest and its content digest), so a sealed file moved to another place, or left from another
version, does not open.

The nonce is synthetic: HMAC-SHA-256 of the associated data and the plaintext, under a second
derived key, cut to 96 bits (the SIV construction). The same content under the same key gives
the same bytes, which is what makes manifests deterministic and diffs of unchanged sets empty;
two different plaintexts get the same nonce with probability about 2**-96 per pair, which is the
only way a GCM nonce could repeat. What this reveals is that two sealed files are identical,
nothing more.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from contam_guard.errors import ManifestError
from contam_guard.manifest.binfile import RESTORE_FILE

SEALED = b"CGM2SEAL"
AEAD = "aes-256-gcm"
KDF = "hkdf-sha256"
NONCE_BYTES = 12
SALT_BYTES = 16
_INFO = b"contam-guard manifest format 2: aes-256-gcm key, then nonce key"


def new_salt() -> str:
    """A fresh random salt (hex) for a new keyed manifest."""
    return secrets.token_hex(SALT_BYTES)


@dataclass(frozen=True)
class SealKey:
    """The two keys derived from the secret and the manifest's salt (the secret is not kept)."""

    aead: bytes
    nonce: bytes

    @classmethod
    def derive(cls, secret: str, salt: str) -> SealKey:
        # cryptography is imported by what uses it: only a keyed manifest does, and every
        # scan of an unkeyed one would pay its import to start.
        from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: PLC0415

        material = HKDF(algorithm=hashes.SHA256(), length=64, salt=bytes.fromhex(salt), info=_INFO).derive(
            secret.encode("utf-8")
        )
        return cls(material[:32], material[32:])

    def seal(self, plaintext: bytes, aad: bytes) -> bytes:
        """``SEALED``, the synthetic nonce, and the ciphertext with its tag."""
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

        nonce = hmac.new(self.nonce, len(aad).to_bytes(8, "little") + aad + plaintext, hashlib.sha256)
        iv = nonce.digest()[:NONCE_BYTES]
        return SEALED + iv + AESGCM(self.aead).encrypt(iv, plaintext, aad)

    def open(self, sealed: bytes | memoryview, aad: bytes, display: str) -> bytes:
        """The plaintext of ``sealed``; ``ManifestError`` when it does not open (damaged, moved,
        left from another version, or sealed under another key)."""
        view = memoryview(sealed)
        if len(view) < len(SEALED) + NONCE_BYTES + 16 or bytes(view[: len(SEALED)]) != SEALED:
            raise ManifestError(
                f"{display}: not a sealed file of a keyed manifest",
                hint=f"restore it from version control (git checkout -- {display})",
            )
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

        start = len(SEALED)
        iv = bytes(view[start : start + NONCE_BYTES])
        try:
            return AESGCM(self.aead).decrypt(iv, bytes(view[start + NONCE_BYTES :]), aad)
        except InvalidTag:
            raise ManifestError(
                f"{display}: does not open with this key (damaged, edited, moved from another set, "
                "or from another version of the manifest)",
                hint=RESTORE_FILE.format(display=display),
            ) from None
