"""API token format and hashing.

A token reads `glm_<prefix>_<secret>`: the prefix is stored in clear to find the row, the
whole token only as SHA-256 (a random 256-bit secret needs no slow hash), compared in
constant time. The `glm_` marker lets secret scanners recognise leaked tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

TOKEN_MARKER = "glm"  # noqa: S105 - a public marker, not a secret


@dataclass(frozen=True, slots=True)
class NewToken:
    prefix: str
    secret_hash: str
    plaintext: str


def hash_token(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def generate_token() -> NewToken:
    prefix = secrets.token_hex(6)
    plaintext = f"{TOKEN_MARKER}_{prefix}_{secrets.token_urlsafe(32)}"
    return NewToken(prefix=prefix, secret_hash=hash_token(plaintext), plaintext=plaintext)


def parse_prefix(plaintext: str) -> str | None:
    """The prefix of a well-formed token, or None for anything else."""
    parts = plaintext.split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_MARKER or len(parts[1]) != 12 or not parts[2]:
        return None
    return parts[1]


def matches(plaintext: str, secret_hash: str) -> bool:
    return hmac.compare_digest(hash_token(plaintext), secret_hash)
