"""Keep web_fetch away from HA itself and the LAN (server-side request forgery).

A page the model reads can carry instructions ("now fetch http://192.168.1.1/...").
Before any request we resolve the host and refuse if ANY of its addresses is not a
public one, unless the user allow-listed that host or network. The fetcher checks
each redirect hop with the same policy and connects only to the checked addresses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
import ipaddress
import socket
from typing import Protocol, override

from yarl import URL

from ..errors import FetchRefusedError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})

# Cloud metadata services: named separately so the refusal says why.
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# IPv6 ranges no public web server answers from, whatever address they carry:
# a stack may route ::ffff:127.0.0.1 or ::127.0.0.1 to this machine, and a
# SIIT translator ::ffff:0:127.0.0.1 to a host of its own network.
_NOT_PUBLIC_V6 = (
    (ipaddress.ip_network("::ffff:0:0/96"), "an IPv4-mapped IPv6 address"),
    (ipaddress.ip_network("::ffff:0:0:0/96"), "an IPv4-translated IPv6 address"),
    (ipaddress.ip_network("::/96"), "an IPv4-compatible IPv6 address"),
    (ipaddress.ip_network("fec0::/10"), "a site-local IPv6 address"),
)


class Resolver(Protocol):
    """What we need from a resolver: aiohttp's AbstractResolver has this shape."""

    @override
    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = ...
    ) -> list: ...


@dataclass(frozen=True, slots=True)
class AllowList:
    """Hosts and networks the user trusts web_fetch to reach (e.g. a LAN wiki)."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = field(default_factory=tuple)

    def allows_host(self, host: str) -> bool:
        """True for an exact host name (case-insensitive, trailing dot ignored)."""
        return host.lower().rstrip(".") in self.hosts

    def allows_address(self, address: IPAddress) -> bool:
        """True when the address falls inside an allow-listed network."""
        return any(address in net for net in self.networks)


def parse_allow_list(entries: Iterable[str] | str | None) -> AllowList:
    """Parse host names, IPs and CIDRs (list or comma/space/newline separated).

    Raises ValueError naming the bad entry, so the config flow can show it.
    """
    if entries is None:
        return AllowList()
    if isinstance(entries, str):
        entries = entries.replace(",", " ").split()
    hosts: set[str] = set()
    networks: list[IPNetwork] = []
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
            continue
        except ValueError:
            pass
        name = entry.lower().rstrip(".")
        if "/" in name or ":" in name or not _looks_like_hostname(name):
            raise ValueError(f"'{entry}' is neither a host name, an IP nor a CIDR")
        hosts.add(name)
    return AllowList(frozenset(hosts), tuple(networks))


def _looks_like_hostname(name: str) -> bool:
    labels = name.split(".")
    return all(
        label and len(label) <= 63 and label.replace("-", "").replace("_", "").isalnum()
        for label in labels
    )


def refusal_reason(address: IPAddress) -> str | None:
    """Why this address is off limits, or None when it is a public address."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address (this machine)"
    if isinstance(address, ipaddress.IPv6Address):
        for network, reason in _NOT_PUBLIC_V6:
            if address in network:
                return reason
        # 6to4 and NAT64 reach IPv4 hosts: judge them by the host they reach.
        embedded = address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return refusal_reason(embedded)
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT address"
    if address.is_private:
        return "a private (LAN) address"
    if not address.is_global:
        return "a reserved, non-public address"
    return None


def check_address(host: str, address: IPAddress, allow: AllowList) -> None:
    """Refuse one address unless it is public or allow-listed."""
    if allow.allows_host(host) or allow.allows_address(address):
        return
    if (reason := refusal_reason(address)) is not None:
        raise FetchRefusedError(
            f"{host} resolves to {address}, {reason}. web_fetch only reads public "
            "web pages; the user can allow-list this host or network in the "
            "Toolbelt tools settings if it is meant to be reachable."
        )


def check_scheme(url: URL) -> str:
    """Return the host of an http(s) URL, or refuse anything else."""
    if url.scheme not in ALLOWED_SCHEMES:
        raise FetchRefusedError(
            f"Only http and https URLs can be fetched, not '{url.scheme or url}'."
        )
    if not url.host:
        raise FetchRefusedError(f"'{url}' has no host name.")
    return url.host


async def check_url(url: URL, allow: AllowList, resolver: Resolver) -> list[IPAddress]:
    """Refuse a URL whose scheme or ANY resolved address is off limits.

    Returns the addresses so the caller can compare them with the connected peer.
    """
    host = check_scheme(url)
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is not None:
        check_address(host, literal, allow)
        return [literal]
    if allow.allows_host(host):
        return []
    try:
        answers = await resolver.resolve(
            host, url.port or 0, family=socket.AddressFamily.AF_UNSPEC
        )
    except OSError as err:
        raise FetchRefusedError(f"Could not resolve the host name {host}.") from err
    addresses = [ipaddress.ip_address(a["host"].split("%")[0]) for a in answers]
    if not addresses:
        raise FetchRefusedError(f"The host name {host} has no addresses.")
    for address in addresses:
        check_address(host, address, allow)
    return addresses
