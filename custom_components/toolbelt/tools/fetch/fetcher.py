"""Fetch one web page as readable text, safely.

Redirects are followed by hand so that every hop passes the SSRF check, and each
request connects to the very addresses that were checked (no second DNS lookup to
rebind). The body is read in chunks up to a byte cap so a huge or endless page
cannot fill memory; binary content is refused before it is read; one deadline
covers the download. Turning HTML into text has its own limit, so a page that is
too complex is reported as such and not as a site that did not answer. Whatever
the site says reaches the model as outside data, its error replies included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
import zlib

import aiohttp
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from ...ha.outside_data import outside
from ..errors import FetchFailedError, FetchRefusedError
from .extract import decode_text, extract_html, truncate_text
from .ssrf import AllowList, IPAddress, Resolver, check_url

MAX_BYTES = 2 * 1024 * 1024
MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 15.0
# The extractor's work is bounded (see extract.py: ~0.5 s for the worst 2 MB page
# on a desktop CPU); this covers a slow board or a busy executor.
DEFAULT_EXTRACT_TIMEOUT = 10.0
DEFAULT_MAX_CHARS = 8000
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/rss+xml",
        "application/atom+xml",
        "application/javascript",
    }
)
HEADERS = {
    "User-Agent": "Mozilla/5.0 (compatible; HomeAssistant-Toolbelt/0.1)",
    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    # The byte cap must count what lands in memory: a 30 KB gzip body can
    # inflate to 30 MB. We ask for none and inflate any we get under the cap.
    "Accept-Encoding": "identity",
}
# zlib reads both gzip and zlib-wrapped deflate with this window.
_GZIP_OR_ZLIB = zlib.MAX_WBITS | 32

RunBlocking = Callable[..., Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """What the model gets from web_fetch, before it is numbered as a reference."""

    url: str
    title: str | None
    text: str
    content_type: str
    truncated: bool
    """The text was cut to max_chars or the body to the byte cap."""


@dataclass(frozen=True, slots=True)
class _Download:
    """A body read under the cap; the connection is already released."""

    url: URL
    content_type: str
    charset: str | None
    body: bytes
    cut: bool


class WebFetcher:
    """Reads pages through a shared aiohttp session under an SSRF policy."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        allow: AllowList | None = None,
        resolver: Resolver | None = None,
        run_blocking: RunBlocking | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        extract_timeout: float = DEFAULT_EXTRACT_TIMEOUT,
        max_bytes: int = MAX_BYTES,
        max_redirects: int = MAX_REDIRECTS,
    ) -> None:
        """Set up; run_blocking runs extraction off the loop (HA's executor)."""
        self._session = session
        self._allow = allow or AllowList()
        self._resolver = resolver or ThreadedResolver()
        self._run_blocking = run_blocking or asyncio.to_thread
        self.timeout = timeout
        self.extract_timeout = extract_timeout
        self._max_bytes = max_bytes
        self._max_redirects = max_redirects

    async def fetch(self, url: str, max_chars: int = DEFAULT_MAX_CHARS) -> FetchedPage:
        """Fetch url and return its readable text, cut to max_chars.

        An error raised once the site has answered may carry its words (the
        status line, a header, a redirect target, a broken reply): its message is
        an outside-data block, like the page itself would be.
        """
        target = _parse_url(url)
        try:
            async with asyncio.timeout(self.timeout):
                download = await self._download(target)
        except TimeoutError as err:
            raise FetchFailedError(
                f"{target.host} did not answer within {self.timeout:g} s."
            ) from err
        except aiohttp.ClientError as err:
            raise _unreadable(target, err) from err
        try:
            return await self._to_page(download, max_chars)
        except (FetchFailedError, FetchRefusedError) as err:
            raise _from_site(target, err) from err

    async def _download(self, url: URL) -> _Download:
        answered = False
        try:
            for _hop in range(self._max_redirects + 1):
                addresses = await check_url(url, self._allow, self._resolver)
                async with await self._get(url, addresses) as resp:
                    answered = True
                    if resp.status in REDIRECT_STATUSES:
                        url = _next_hop(url, resp)
                        continue
                    if resp.status >= 400:
                        raise FetchFailedError(
                            f"{url.host} answered HTTP {resp.status}"
                            f" {resp.reason or ''} for {url}.".replace("  ", " ")
                        )
                    content_type = _check_content_type(url, resp)
                    body, cut = await self._read_capped(resp)
                    return _Download(url, content_type, resp.charset, body, cut)
            raise FetchFailedError(
                f"More than {self._max_redirects} redirects starting at {url}; gave up."
            )
        except (FetchFailedError, FetchRefusedError, aiohttp.ClientError) as err:
            if answered or _quotes_the_site(err):
                raise _from_site(url, err) from err
            raise

    async def _get(
        self, url: URL, addresses: list[IPAddress]
    ) -> aiohttp.ClientResponse:
        """GET url, connecting only to the addresses we checked.

        The request goes to the IP itself, with the real name in the Host header
        and as the TLS server name, so a second DNS answer (rebinding) can never
        redirect the connection. Addresses are tried in order.
        """
        if not addresses or url.host in (str(a) for a in addresses):
            return await self._session.get(
                url, allow_redirects=False, headers=HEADERS, auto_decompress=False
            )
        # raw_host is the punycode form: what DNS, Host and SNI carry for "bücher.de".
        host = url.raw_host or ""
        host_header = host if url.is_default_port() else f"{host}:{url.port}"
        headers = {**HEADERS, "Host": host_header}
        if url.scheme == "https":
            # aiohttp pools connections by IP, not TLS name: never reuse this one
            # for another host name on the same address.
            headers["Connection"] = "close"
        last_error: aiohttp.ClientError | None = None
        for address in addresses:
            try:
                return await self._session.get(
                    url.with_host(str(address)),
                    allow_redirects=False,
                    headers=headers,
                    server_hostname=host if url.scheme == "https" else None,
                    auto_decompress=False,
                )
            except aiohttp.ClientConnectorError as err:
                last_error = err
        assert last_error is not None
        raise last_error

    async def _read_capped(self, resp: aiohttp.ClientResponse) -> tuple[bytes, bool]:
        """Read at most max_bytes of the decoded body; refuse a declared oversize.

        Compressed bodies are inflated here, chunk by chunk, never past the cap.
        """
        declared = resp.content_length
        if declared is not None and declared > self._max_bytes:
            raise FetchRefusedError(
                f"The page is {declared / 1_048_576:.1f} MB; web_fetch reads at most "
                f"{self._max_bytes / 1_048_576:g} MB."
            )
        inflate = _inflater(resp)
        chunks: list[bytes] = []
        total = 0
        async for chunk in resp.content.iter_chunked(64 * 1024):
            pending = chunk
            while pending:
                room = self._max_bytes - total
                if inflate is None:
                    data, pending = pending[: room + 1], b""
                else:
                    try:
                        data = inflate.decompress(pending, room + 1)
                    except zlib.error as err:
                        raise FetchFailedError(
                            f"{resp.url.host} sent a damaged compressed body."
                        ) from err
                    pending = inflate.unconsumed_tail
                if len(data) > room:
                    chunks.append(data[:room])
                    return b"".join(chunks), True
                chunks.append(data)
                total += len(data)
        return b"".join(chunks), False

    async def _to_page(self, download: _Download, max_chars: int) -> FetchedPage:
        url, content_type, body = download.url, download.content_type, download.body
        if b"\x00" in body[:4096]:
            raise FetchRefusedError(
                f"{url} is binary data labelled {content_type}; only text pages "
                "can be read."
            )
        if content_type in HTML_TYPES or (
            not content_type
            and body.lstrip()[:15].lower().startswith(b"<!doctype html")
        ):
            try:
                async with asyncio.timeout(self.extract_timeout):
                    extracted = await self._run_blocking(
                        extract_html, body, str(url), max_chars
                    )
            except TimeoutError as err:
                # The worker finishes on its own: the extractor's work is bounded.
                raise FetchRefusedError(
                    f"{url} was downloaded ({len(body) / 1024:.0f} KB), but the page "
                    "is too large or complex to turn into text within "
                    f"{self.extract_timeout:g} s. Try another page or source."
                ) from err
            except Exception as err:  # lxml/trafilatura on a malformed page
                raise FetchFailedError(
                    f"{url.host} answered, but its page could not be turned into "
                    f"text ({type(err).__name__})."
                ) from err
            title, text = extracted.title, extracted.text
        else:
            title, text = None, decode_text(body, download.charset)
        if not text.strip():
            text = "(the page has no readable text)"
        text, truncated = truncate_text(text, max_chars)
        if download.cut and not truncated:
            text += "\n[… cut: the page is larger than the download limit]"
        return FetchedPage(
            url=str(url),
            title=title,
            text=text,
            content_type=content_type or "unknown",
            truncated=truncated or download.cut,
        )


def _unreadable(url: URL, err: aiohttp.ClientError) -> FetchFailedError:
    """A connection or protocol failure, as the model reads it."""
    return FetchFailedError(
        f"Could not read {url.host}: {type(err).__name__} {err}".strip()
    )


def _quotes_the_site(err: Exception) -> bool:
    """Whether a failure before any response may quote the site: every client
    error but a connection never made (a TLS failure quotes its certificate, a
    malformed reply its bytes)."""
    if isinstance(err, aiohttp.ClientSSLError):
        return True
    return isinstance(err, aiohttp.ClientError) and not isinstance(
        err, aiohttp.ClientConnectorError
    )


def _from_site(
    url: URL, err: FetchFailedError | FetchRefusedError | aiohttp.ClientError
) -> FetchFailedError | FetchRefusedError:
    """The same error with its words in an outside-data block: they may hold what
    the site sent, which must reach the model marked as such."""
    if isinstance(err, aiohttp.ClientError):
        err = _unreadable(url, err)
    return type(err)(outside(str(err), "web_fetch"))


def _parse_url(url: str) -> URL:
    """Accept 'example.com/x' as https; refuse what is not a URL at all."""
    url = url.strip()
    if "://" not in url and not url.startswith(("mailto:", "file:", "data:")):
        url = f"https://{url}"
    try:
        parsed = URL(url)
    except ValueError as err:
        raise FetchRefusedError(f"'{url}' is not a valid URL.") from err
    if parsed.scheme in ("http", "https") and not parsed.raw_host:
        raise FetchRefusedError(f"'{url}' has no host name.")
    _check_host(parsed)
    return parsed


def _check_host(url: URL) -> None:
    """Refuse a host name DNS would refuse, before IDNA raises UnicodeError on it.

    Called for the first URL and for every redirect target.
    """
    raw = url.raw_host
    if not raw:
        return
    problem = _host_problem(raw)
    if problem is None:
        try:
            url.host  # noqa: B018 - yarl decodes 'xn--' labels here
        except UnicodeError:
            problem = "an 'xn--' label is not valid punycode"
    if problem:
        raise FetchRefusedError(f"'{raw}' is not a valid host name: {problem}.")


def _host_problem(host: str) -> str | None:
    """What DNS would refuse in a host name (IDNA raises UnicodeError for it)."""
    if ":" in host or host.replace(".", "").isdigit():
        return None  # an IP literal
    name = host.rstrip(".")
    if len(name) > 253:
        return "it is longer than 253 characters"
    for label in name.split("."):
        if not label:
            return "it has an empty label (two dots in a row)"
        if len(label) > 63:
            return f"the label '{label[:20]}…' is longer than 63 characters"
    try:
        name.encode("idna")
    except UnicodeError as err:
        return str(err) or "it cannot be encoded for DNS"
    return None


def _inflater(resp: aiohttp.ClientResponse) -> Any:
    """A zlib inflater for a gzip/deflate body, None for an uncompressed one."""
    encoding = resp.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(_GZIP_OR_ZLIB)
    raise FetchRefusedError(
        f"{resp.url.host} sent the page compressed as '{encoding}', which web_fetch "
        "does not read (it asks for no compression)."
    )


def _next_hop(url: URL, resp: aiohttp.ClientResponse) -> URL:
    location = resp.headers.get("Location")
    if not location:
        raise FetchFailedError(f"{url} redirected without saying where to.")
    try:
        target = url.join(URL(location))
    except ValueError as err:
        raise FetchFailedError(f"{url} redirected to an invalid URL.") from err
    _check_host(target)
    return target


def _check_content_type(url: URL, resp: aiohttp.ClientResponse) -> str:
    """Refuse binary types before reading the body; '' means the server did not say."""
    if "Content-Type" not in resp.headers:
        return ""
    content_type = resp.content_type.lower()
    if (
        content_type.startswith("text/")
        or content_type in HTML_TYPES
        or content_type in TEXT_TYPES
        or content_type.endswith(("+json", "+xml"))
    ):
        return content_type
    raise FetchRefusedError(
        f"{url} is {content_type}, not a text page; web_fetch only reads text and HTML."
    )
