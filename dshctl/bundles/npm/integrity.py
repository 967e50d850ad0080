"""Subresource-integrity checks for tarballs: sha512 SRI (``dist.integrity``), else sha1 ``shasum``."""
from __future__ import annotations

import base64
import binascii
import hashlib

_STRENGTH = {"sha512": 3, "sha384": 2, "sha256": 1}
_DIGEST_BYTES = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64}


class IntegrityError(Exception):
    pass


def expected(dist: dict) -> str:
    """The strongest integrity the registry declares, as an SRI string (``sha1-…`` from shasum)."""
    best = None
    for token in str(dist.get("integrity") or "").split():
        algo, _, b64 = token.partition("-")
        if algo in _STRENGTH and b64 and (best is None or _STRENGTH[algo] > _STRENGTH[best[0]]):
            best = (algo, b64.split("?")[0])
    if best:
        return f"{best[0]}-{best[1]}"
    shasum = dist.get("shasum")
    if isinstance(shasum, str) and len(shasum) == 40:
        try:
            return "sha1-" + base64.b64encode(bytes.fromhex(shasum)).decode()
        except ValueError:
            pass
    raise IntegrityError("the registry declares no dist.integrity or dist.shasum")


def store_key(sri: str) -> str:
    """A file-name-safe key for an SRI string: ``<algo>-<hex>``."""
    algo, _, b64 = sri.partition("-")
    if algo not in _DIGEST_BYTES:  # the key names a store file: no other text may reach it
        raise IntegrityError(f"integrity {sri[:80]!r} does not use sha1, sha256, sha384 or sha512")
    try:
        digest = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raise IntegrityError(f"integrity {sri[:80]!r} is not valid base64") from None
    if len(digest) != _DIGEST_BYTES[algo]:
        raise IntegrityError(f"integrity {sri[:80]!r} is not a {algo} digest")
    return f"{algo}-{digest.hex()}"


def check(data: bytes, sri: str) -> None:
    algo, _, b64 = sri.partition("-")
    digest = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if digest != b64:
        raise IntegrityError(f"integrity mismatch: the registry declares {sri[:24]}…, the tarball "
                             f"has {algo}-{digest[:16]}…")


def check_file(path, sri: str) -> None:
    """``check`` for a file, read in blocks (a tarball is never held whole in memory)."""
    algo, _, b64 = sri.partition("-")
    hasher = hashlib.new(algo)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            hasher.update(block)
    digest = base64.b64encode(hasher.digest()).decode()
    if digest != b64:
        raise IntegrityError(f"integrity mismatch: the registry declares {sri[:24]}…, the tarball "
                             f"has {algo}-{digest[:16]}…")


def sri_of(data: bytes, algo: str = "sha512") -> str:
    return f"{algo}-" + base64.b64encode(hashlib.new(algo, data).digest()).decode()
