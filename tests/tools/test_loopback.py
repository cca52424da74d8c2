"""tools.loopback.is_loopback: the one check behind every loopback-by-default server."""
import pytest

from evidex.tools.loopback import is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "LOCALHOST", "::1", "[::1]", "localhost."])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "127.0.0.1.nip.io", ""])
def test_other_hosts(host):
    assert not is_loopback(host)
