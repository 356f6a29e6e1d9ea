"""How `wkc serve` runs: where it listens, who may use it, how much it accepts."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

from ..errors import InputError

TOKEN_ENV = "WKC_TOKEN"
# Request bodies `--max-body` may allow: a bundled intake is 0.5-2 kB, so below 4 kB the forms fail;
# above 1 GiB one request holds the server's memory.
MIN_BODY_BYTES, MAX_BODY_BYTES = 4096, 2**30
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None                # required for any bind other than loopback
    database_url: str | None = None         # None: $WKC_DATABASE_URL, else the default SQLite file
    max_body_bytes: int = 2 * 1024 * 1024   # an intake, a YAML file or a config.json is far smaller
    rate_per_minute: int = 600              # per client address; 0 turns the limit off
    rate_burst: int = 60
    cache_size: int = 256
    example: str = "gpt3-175b-a100"         # the example loaded on the first page

    def checked(self) -> Settings:
        """Refuse to start where a token is needed and missing (or too short to be a secret)."""
        if not 0 < self.port < 65536:
            raise InputError("--port", self.port, "a TCP port 1-65535")
        if self.rate_per_minute < 0:
            raise InputError("--rate", self.rate_per_minute, "requests a minute per client, 0 or more (0: no limit)")
        if not MIN_BODY_BYTES <= self.max_body_bytes <= MAX_BODY_BYTES:
            raise InputError("--max-body", self.max_body_bytes,
                             f"{MIN_BODY_BYTES:,} to {MAX_BODY_BYTES:,} bytes (an intake is 0.5-2 kB)")
        token = self.token or os.environ.get(TOKEN_ENV) or None
        if not is_loopback(self.host):
            if not token:
                raise InputError("--host", self.host, f"a loopback address (127.0.0.1), or give --token or "
                                                      f"${TOKEN_ENV}: binding beyond this machine needs a token")
            if len(token) < 16:
                raise InputError("--token", "(hidden)", "at least 16 characters")
        return Settings(**{**self.__dict__, "token": token})


__all__ = ["TOKEN_ENV", "Settings", "is_loopback"]
