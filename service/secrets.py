"""Encryption at rest of merchant secret keys under the master key (Fernet: AES-CBC + HMAC)."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken


class MasterKeyError(Exception):
    pass


def master_key(configured: str, data_dir: str) -> bytes:
    """The configured key, or for the embedded default one kept in the data folder."""
    if configured:
        return configured.encode()
    path = Path(data_dir) / "master.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
    return path.read_bytes().strip()


class Vault:
    def __init__(self, key: bytes):
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError):
            raise MasterKeyError("SERVICE_MASTER_KEY must be a urlsafe base64 32-byte Fernet key") from None

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise MasterKeyError("a secret key does not decrypt under this master key") from None
