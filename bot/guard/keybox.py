"""Encryption of guild station keys at rest (Fernet, key from ONAIR_SECRET_KEY)."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken

from ..errors import OnAirError

# The environment variable holding the Fernet key (read with the settings, bot.config).
SECRET_ENV = "ONAIR_SECRET_KEY"


class KeyBoxError(OnAirError):
    pass


class KeyBox:
    """Encrypts and decrypts station keys; refuses to work without a secret rather than store
    keys in the clear."""

    def __init__(self, secret: str | None) -> None:
        self._fernet: Fernet | None = None
        if secret:
            try:
                self._fernet = Fernet(secret.encode())
            except (ValueError, TypeError):
                raise KeyBoxError(
                    f"{SECRET_ENV} is not a valid Fernet key; make one with: python -c "
                    "'from cryptography.fernet import Fernet; "
                    "print(Fernet.generate_key().decode())'"
                ) from None

    @property
    def available(self) -> bool:
        return self._fernet is not None

    def encrypt(self, key: str) -> bytes:
        if self._fernet is None:
            raise KeyBoxError(
                "This OnAir host has no encryption secret set, so it cannot store station keys "
                "safely. Please ask the bot's owner to set ONAIR_SECRET_KEY."
            )
        return self._fernet.encrypt(key.encode())

    def decrypt(self, cipher: bytes) -> str | None:
        if self._fernet is None:
            return None
        try:
            return self._fernet.decrypt(cipher).decode()
        except InvalidToken:
            return None
