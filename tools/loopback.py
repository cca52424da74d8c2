"""Whether a host name or address is this machine only: the one check behind every "loopback by default" server
(the web page, the model server, a Ray cluster the run joins)."""
from __future__ import annotations

import ipaddress

_LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1`` (brackets allowed); False for any other name or address."""
    host = host.strip("[]")
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
