"""The dev instance through a real browser: what a newcomer sees after login.

develop_check runs this after its API checks. Headless Chromium (Debian's
package; Playwright drives it, it downloads no browser of its own) logs in
with the banner's credentials and checks that the UI really loads: the
overview with the demo home, Settings > Devices & services with Toolbelt, and
the Assist dialog answering. A frontend stuck on "Loading data" (a
websocket command failing in HA, say) fails here, not in a user's hands.
Screenshots go to a directory the caller names.
"""

from __future__ import annotations

from pathlib import Path
import re
import shutil

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # This machine's network is closed: no background calls to Google.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 30_000


class BrowserCheckFailed(Exception):
    """What the browser showed was not what a user should see."""


def chromium_path() -> str | None:
    """Debian's chromium, or whichever chromium is on the PATH."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


FORM_SHOTS = ("server_kind", "connect", "agent")
"""Screenshots of real forms, in the order taken (docs/ gets copies)."""


async def _shoot_forms(page, url: str, shot, visible, expect) -> None:
    """Open Toolbelt's server flow (two steps) and an agent's form, as a user would.

    Nothing is submitted past the server kind: the dialogs are closed.
    """
    await page.goto(f"{url}/config/integrations/dashboard/add?domain=toolbelt")
    await page.get_by_role("button", name="OK").click()
    await expect(visible(page.get_by_text("llama.cpp server"))).to_be_visible()
    await shot(page, "server_kind")
    await visible(page.get_by_text("llama.cpp server")).click()
    await page.get_by_role("button", name="Submit").click()
    await expect(
        visible(page.get_by_text("Connect to the llama.cpp server"))
    ).to_be_visible()
    await shot(page, "connect")
    await page.keyboard.press("Escape")
    await page.goto(f"{url}/config/integrations/integration/toolbelt")
    await page.get_by_role("button", name="Reconfigure agent").first.click()
    await expect(visible(page.get_by_text("Tool-call format"))).to_be_visible()
    await shot(page, "agent")
    await page.keyboard.press("Escape")


async def check_ui(
    url: str,
    user: str,
    password: str,
    shots: Path,  # an existing directory
    *,
    toolbelt: bool,
    assist_says: str,
    say,
) -> list[Path]:
    """Log in and look at the UI; return the screenshots taken, in order."""
    from playwright.async_api import (
        Error as PlaywrightError,
        async_playwright,
        expect,
    )

    executable = chromium_path()
    if executable is None:
        raise BrowserCheckFailed("no chromium on the PATH (apt-get install chromium)")
    taken: list[Path] = []

    def visible(locator):
        """The first match a user can see (the UI keeps hidden copies of text)."""
        return locator.filter(visible=True).first

    async def shot(page, name: str) -> None:
        path = shots / f"{len(taken) + 1}_{name}.png"
        await page.screenshot(path=str(path))
        taken.append(path)

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            try:
                await page.goto(url, wait_until="domcontentloaded")
                await page.get_by_role("textbox", name="Username").fill(user)
                await page.get_by_role("textbox", name="Password").fill(password)
                await page.get_by_role("button", name="Log in").click()

                # The overview: the demo home's areas, and a device in one of them.
                # HA 2026.2 lists entities by area; 2026.10 shows area cards.
                await expect(visible(page.get_by_text("Kitchen"))).to_be_visible()
                await shot(page, "overview")
                if not await page.get_by_text("Kitchen light").count():
                    await visible(page.get_by_text("Kitchen", exact=True)).click(
                        force=True
                    )
                    await expect(
                        visible(page.get_by_text(re.compile(r"^(Kitchen l|L)ight$")))
                    ).to_be_visible()
                    await shot(page, "kitchen")
                say("ok: the overview renders the demo home in the browser")

                await page.goto(f"{url}/config/integrations/dashboard")
                integration = "Toolbelt" if toolbelt else "Sun"
                await expect(
                    visible(page.get_by_text(integration, exact=True))
                ).to_be_visible()
                await shot(page, "integrations")
                say(f"ok: Settings > Devices & services lists {integration}")

                if toolbelt:
                    await _shoot_forms(page, url, shot, visible, expect)
                    say("ok: the server and agent forms open and are captured")

                await page.goto(url)
                await expect(visible(page.get_by_text("Kitchen"))).to_be_visible()
                assist = page.get_by_role("button", name=re.compile(r"^Assist\b"))
                if await assist.count():
                    await assist.first.click()
                else:  # HA 2026.2 labels the toolbar button differently
                    await page.keyboard.press("a")
                box = page.get_by_role("textbox", name=re.compile("request", re.I))
                await box.fill("hello" if toolbelt else "turn on the kitchen light")
                await box.press("Enter")
                await expect(visible(page.get_by_text(assist_says))).to_be_visible()
                await shot(page, "assist")
                say(f"ok: the Assist dialog answers {assist_says!r}")
            except (PlaywrightError, AssertionError) as err:
                await shot(page, "failure")
                first_line = str(err).strip().splitlines()[0]
                raise BrowserCheckFailed(
                    f"{first_line} (screenshot: {taken[-1]})"
                ) from err
        finally:
            await browser.close()
    return taken
