"""Encryption at rest of a keyed manifest: what a keyed manifest holds beyond set names,
versions, item totals and file sizes is sealed with AES-256-GCM.

The key is derived from the secret (``CONTAM_GUARD_KEY``) with HKDF-SHA-256 and a random salt
recorded in the index (drawn once, by ``init --keyed``), independently of the
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

Sizes say little more: a sealed file is padded (``padded_size``) to 4 KiB plus its set's item
total (which the index shows anyway) times a power of two bytes per item, so a candidate set
registered under another key gives the same sizes whether or not it is the golden one, and
swapping an item changes no size (an item added moves every size with the total, whatever its
length), unless it carries a file's mean bytes per item across a power of two (one item moves
the mean by ``1/items`` of its difference from it). The sealed metadata is padded to a power of
two (``padded_meta``).

The index itself is authenticated: ``mac`` is HMAC-SHA-256 of its canonical text under a third
key derived from the secret, so an index edited without the key (a set, view or rule removed,
its digest recomputed) is refused before anything is scanned with it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from contam_guard.errors import ManifestError
from contam_guard.io.manifest.binfile import RESTORE_FILE

SEALED = b"CGM2SEAL"
AEAD = "aes-256-gcm"
KDF = "hkdf-sha256"
NONCE_BYTES = 12
SALT_BYTES = 16
_INFO = b"contam-guard manifest format 2: aes-256-gcm key, then nonce key"
OVERHEAD = len(SEALED) + NONCE_BYTES + 16
"""Bytes a sealed file adds to its plaintext: the marker, the nonce and GCM's tag."""
MIN_BYTES_PER_ITEM = 64
PAD_FLOOR = 4096
"""Bytes every sealed file has beyond its per-item share: a file's header and the arrays of a
small set fit in it, so the files of every small set of the same item total are the same size."""
MIN_META_BYTES = 512


def new_salt() -> str:
    """A fresh random salt (hex) for a new keyed manifest."""
    return secrets.token_hex(SALT_BYTES)


@dataclass(frozen=True)
class SealKey:
    """The keys derived from the secret and the manifest's salt (the secret is not kept): the
    AEAD's, the synthetic nonce's, and the index MAC's."""

    aead: bytes
    nonce: bytes
    mac: bytes = field(default=b"", repr=False)

    @classmethod
    def derive(cls, secret: str, salt: str) -> SealKey:
        # cryptography is imported by what uses it: only a keyed manifest does, and every
        # scan of an unkeyed one would pay its import to start.
        from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: PLC0415

        # HKDF's output is a prefix of any longer one: the first two keys are those of manifests
        # sealed before the index had a MAC, so their files still open.
        material = HKDF(algorithm=hashes.SHA256(), length=96, salt=bytes.fromhex(salt), info=_INFO).derive(
            secret.encode("utf-8")
        )
        return cls(material[:32], material[32:64], material[64:])

    def index_mac(self, canonical: bytes) -> str:
        """The MAC of an index's canonical text (hex)."""
        return hmac.new(self.mac, b"contam-guard index\0" + canonical, hashlib.sha256).hexdigest()

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


def padded_size(content: int, items: int) -> int:
    """The size a sealed file of ``content`` bytes (sealed, before padding) is padded to:
    ``PAD_FLOOR`` plus its set's item total times the smallest power of two bytes per item (at
    least 64) that holds it. A small set's files all get the floor and 64 bytes per item; a large
    set's show their bytes per item to within a factor of two, which one item moves by a
    ``1/items`` share of its own difference from the mean."""
    per_item = MIN_BYTES_PER_ITEM
    while PAD_FLOOR + per_item * max(items, 1) < content:
        per_item *= 2
    return PAD_FLOOR + per_item * max(items, 1)


def is_padded(size: int, items: int) -> bool:
    """Whether a sealed file of ``size`` bytes has a size ``padded_size`` gives (else it was
    written before sealed files were padded, and is written again)."""
    per_item, rest = divmod(size - PAD_FLOOR, max(items, 1))
    return rest == 0 and per_item >= MIN_BYTES_PER_ITEM and per_item & (per_item - 1) == 0


def padded_meta(text: bytes) -> bytes:
    """Sealed metadata (JSON) padded with spaces to a power of two bytes (at least 512)."""
    size = MIN_META_BYTES
    while size < len(text):
        size *= 2
    return text + b" " * (size - len(text))
