"""SSRF policy: what web_fetch refuses by default, and what an allow-list permits."""

from __future__ import annotations

import socket

import aiohttp
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
import pytest
from yarl import URL

from custom_components.toolbelt.tools.errors import FetchRefusedError
from custom_components.toolbelt.tools.fetch.fetcher import WebFetcher
from custom_components.toolbelt.tools.fetch.ssrf import (
    AllowList,
    check_url,
    parse_allow_list,
)
from tests.local_server import StartServer


class MappedResolver(AbstractResolver):
    """A DNS stand-in: host name -> list of addresses, like a real resolver answers."""

    def __init__(self, mapping: dict[str, list[str]]) -> None:
        self.mapping = mapping
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        if host not in self.mapping:
            raise OSError(f"Domain name not found: {host}")
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET6 if ":" in address else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for address in self.mapping[host]
        ]

    async def close(self) -> None:
        """Nothing to release."""


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.8.9.10:8123/api/states", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://10.0.0.1/admin", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://169.254.10.10/", "link-local"),
        ("http://100.64.1.2/", "carrier-grade NAT"),
        ("http://0.0.0.0:8123/", "unspecified"),
        ("http://224.0.0.251/", "multicast"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[fe80::1]/", "link-local"),
        # Ranges no public server answers from, whatever IPv4 address they carry.
        ("http://[::ffff:8.8.8.8]/", "IPv4-mapped"),
        ("http://[::ffff:c0a8:101]/", "IPv4-mapped"),
        ("http://[::8.8.8.8]/", "IPv4-compatible"),
        ("http://[::7f00:1]/", "IPv4-compatible"),
        # IPv4-translated (SIIT, RFC 7915): a translator may reach 127.0.0.1.
        ("http://[::ffff:0:7f00:1]/", "IPv4-translated"),
        ("http://[::ffff:0:808:808]/", "IPv4-translated"),
        ("http://[fec0::1]/", "site-local"),
        ("http://[feff:ffff::1]/", "site-local"),
        # NAT64 and 6to4 are judged by the IPv4 host they reach.
        ("http://[64:ff9b::c0a8:101]/", "private"),
        ("http://[2002:7f00:1::1]/", "loopback"),
    ],
)
async def test_default_refuses_local_addresses(url: str, reason: str) -> None:
    """No allow-list: every non-public address is refused, saying which kind."""
    with pytest.raises(FetchRefusedError, match=reason):
        await check_url(URL(url), AllowList(), MappedResolver({}))


async def test_hostname_resolving_to_private_is_refused() -> None:
    """The check happens after DNS: a friendly name for a LAN box is still refused."""
    resolver = MappedResolver({"nas.example.com": ["192.168.1.20"]})
    with pytest.raises(
        FetchRefusedError, match=r"nas\.example\.com resolves to 192\.168\.1\.20"
    ):
        await check_url(URL("https://nas.example.com/"), AllowList(), resolver)
    assert resolver.asked == ["nas.example.com"]


async def test_every_resolved_address_is_checked() -> None:
    """One private address among public ones is enough to refuse."""
    resolver = MappedResolver({"mixed.example.com": ["93.184.216.34", "10.1.2.3"]})
    with pytest.raises(FetchRefusedError, match=r"10\.1\.2\.3"):
        await check_url(URL("https://mixed.example.com/"), AllowList(), resolver)


@pytest.mark.parametrize(
    "address", ["64:ff9b::808:808", "2002:808:808::1", "2606:2800:220:1::1"]
)
async def test_public_ipv6_passes(address: str) -> None:
    """NAT64 and 6to4 to a public IPv4 host, and plain global IPv6, are public."""
    assert await check_url(URL(f"http://[{address}]/"), AllowList(), MappedResolver({}))


async def test_a_name_resolving_to_a_mapped_address_is_refused() -> None:
    resolver = MappedResolver({"sneaky.example": ["::ffff:93.184.216.34"]})
    with pytest.raises(FetchRefusedError, match="IPv4-mapped"):
        await check_url(URL("http://sneaky.example/"), AllowList(), resolver)


async def test_public_host_passes() -> None:
    """A name resolving only to public addresses is fine."""
    resolver = MappedResolver({"example.com": ["93.184.216.34", "2606:2800:220:1::1"]})
    addresses = await check_url(URL("https://example.com/x"), AllowList(), resolver)
    assert [str(a) for a in addresses] == ["93.184.216.34", "2606:2800:220:1::1"]


async def test_unresolvable_host_is_refused_readably() -> None:
    """DNS failure is reported, not raised as an OSError."""
    with pytest.raises(FetchRefusedError, match="Could not resolve"):
        await check_url(URL("https://nope.invalid/"), AllowList(), MappedResolver({}))


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x/"]
)
async def test_only_http_and_https(url: str) -> None:
    """Other schemes are refused before any lookup."""
    with pytest.raises(FetchRefusedError, match="Only http and https"):
        await check_url(URL(url), AllowList(), MappedResolver({}))


async def test_allow_list_network_and_host() -> None:
    """A CIDR permits addresses inside it; a host entry permits that name."""
    allow = parse_allow_list("192.168.1.0/24, wiki.lan\n10.9.9.9")
    resolver = MappedResolver(
        {"nas.example.com": ["192.168.1.20"], "wiki.lan": ["10.0.0.7"]}
    )

    await check_url(URL("http://nas.example.com/"), allow, resolver)
    await check_url(URL("http://WIKI.lan./page"), allow, resolver)
    await check_url(URL("http://10.9.9.9/"), allow, resolver)
    with pytest.raises(FetchRefusedError):
        await check_url(URL("http://192.168.2.1/"), allow, resolver)


def test_parse_allow_list_names_bad_entry() -> None:
    """A typo in the allow-list is reported with the entry, for the config form."""
    with pytest.raises(ValueError, match=r"'10\.0\.0\.0/33'"):
        parse_allow_list(["10.0.0.0/33"])
    with pytest.raises(ValueError, match="'http://x'"):
        parse_allow_list("http://x")
    assert parse_allow_list(None) == AllowList()


async def test_default_refuses_the_local_test_server(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """Fetching our own 127.0.0.1 server is refused, and the server sees no request."""
    app = web.Application()
    app.router.add_get(
        "/", lambda r: web.Response(text="secret", content_type="text/plain")
    )
    server = await local_server(app)

    fetcher = WebFetcher(session, resolver=MappedResolver({}))
    with pytest.raises(FetchRefusedError, match="loopback"):
        await fetcher.fetch(f"{server.url}/")
    assert server.requests == []


async def test_allow_list_permits_the_test_server(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """With 127.0.0.1/32 allow-listed the same fetch works."""
    app = web.Application()
    app.router.add_get(
        "/", lambda r: web.Response(text="hello from LAN", content_type="text/plain")
    )
    server = await local_server(app)

    fetcher = WebFetcher(
        session, allow=parse_allow_list(["127.0.0.1/32"]), resolver=MappedResolver({})
    )
    page = await fetcher.fetch(f"{server.url}/")
    assert page.text == "hello from LAN"


async def test_connection_goes_to_the_checked_address(
    local_server: StartServer, socket_enabled: None
) -> None:
    """The fetch connects to the address we checked; no second lookup can rebind it.

    The session's own resolver knows nothing (as if DNS now answered elsewhere);
    the fetch still works, with the real name in the Host header.
    """
    hosts: list[str] = []

    async def page(request: web.Request) -> web.Response:
        hosts.append(request.headers["Host"])
        return web.Response(text="wiki page", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/", page)
    server = await local_server(app)
    session_dns = MappedResolver({})
    connector = aiohttp.TCPConnector(resolver=session_dns)
    async with aiohttp.ClientSession(connector=connector) as session:
        fetcher = WebFetcher(
            session,
            allow=parse_allow_list(["127.0.0.1/32"]),
            resolver=MappedResolver({"wiki.example.com": ["127.0.0.1"]}),
        )
        page_text = (
            await fetcher.fetch(f"http://wiki.example.com:{server.port}/")
        ).text
    assert page_text == "wiki page"
    assert hosts == [f"wiki.example.com:{server.port}"]
    assert session_dns.asked == []
