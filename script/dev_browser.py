"""The dev instance through a real browser: what a newcomer sees after login.

develop_check runs this after its API checks. Headless Chromium (Debian's
package; Playwright drives it, it downloads no browser of its own) logs in
with the banner's credentials and checks that the UI really loads: the
overview with the demo home, Settings > Devices & services with Toolbelt, its
forms (every string rendered by the frontend, the tool-call formats, the check
naming its model and checking another), and the Assist dialog answering. A frontend stuck on "Loading data" (a
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


FORM_SHOTS = ("server_kind", "connect", "first_agent", "check")
"""Screenshots of real forms that the README shows (docs/ gets copies)."""

# Every Toolbelt string through the frontend's own formatter (intl-messageformat):
# a string it cannot parse comes back as "Translation error: ...".
LOCALIZE_ALL = """
async (args) => {
  const root = document.querySelector("home-assistant");
  const bad = {};
  let count = 0;
  for (const category of ["config", "config_subentries", "selector", "exceptions", "issues"]) {
    const {resources} = await root.hass.callWS({
      type: "frontend/get_translations", language: root.hass.language,
      category, integration: ["toolbelt"],
    });
    await root.hass.loadBackendTranslation(category, "toolbelt");
    const localize = document.querySelector("home-assistant").hass.localize;
    for (const key of Object.keys(resources)) {
      count += 1;
      const text = localize(key, args);
      if (!text || text.startsWith("Translation error")) bad[key] = text;
    }
  }
  return {count, bad};
}
"""
PLACEHOLDERS = {
    "server": "S",
    "model": "M",
    "result": "R",
    "constraints": "C",
    "backend": "B",
    "details": "D",
    "accepted": "A",
    "attachment": "F",
    "mime_type": "T",
    "limit": "1",
    "size": "2",
    "error": "E",
    "message": "M",
    "labels": "L",
    "question": "Q",
    "reply": "R",
    "count": "3",
    "status": "500",
}


async def _no_translation_error(page, where: str) -> None:
    """Nothing on the page reads "Translation error" (the frontend's own words)."""
    if shown := await page.get_by_text("Translation error").count():
        raise AssertionError(f"{shown} 'Translation error' on the page {where}")


async def _close_dialog(page) -> None:
    """Close a flow's dialog as a user does; HA then drops the flow."""
    await page.keyboard.press("Escape")  # a list left open
    close = page.get_by_role("button", name="Close").filter(visible=True)
    if await close.count():
        await close.first.click()
    await page.wait_for_timeout(500)


async def _walk_forms(
    page, url: str, stub_url: str, shot, visible, expect, say
) -> None:
    """Toolbelt's forms as a newcomer meets them, through the stub model server.

    The server flow on a second address of the stub (closed before it saves):
    the model picked first, the check naming it and its "No tool call" verdict,
    the format list without "Translation error", another model and format
    checked again on the same form, Tool choice by its labels.
    """
    found = await page.evaluate(LOCALIZE_ALL, PLACEHOLDERS)
    if found["bad"] or found["count"] < 100:
        raise AssertionError(f"the frontend cannot render: {found}")
    say(f"ok: the frontend renders all {found['count']} Toolbelt strings")

    await page.goto(f"{url}/config/integrations/dashboard/add?domain=toolbelt")
    await page.get_by_role("button", name="OK").click()
    await expect(visible(page.get_by_text("llama.cpp server"))).to_be_visible()
    await shot(page, "server_kind")
    try:
        await visible(page.get_by_text("Other OpenAI-compatible server")).click()
        await page.get_by_role("button", name="Submit").click()
        await expect(
            visible(page.get_by_text("Connect to the model server"))
        ).to_be_visible()
        await shot(page, "connect")
        # Another address of the same stub: a second server, never saved.
        second = stub_url.replace("127.0.0.1", "localhost")
        await page.get_by_role("textbox", name=re.compile("Base URL")).fill(second)
        await page.get_by_role("button", name="Submit").click()

        await expect(visible(page.get_by_text("The first agent"))).to_be_visible()
        await visible(page.get_by_text("stub-hermes", exact=True)).click()
        await visible(page.get_by_text("stub-chat", exact=True)).click()
        await shot(page, "first_agent")
        await page.get_by_role("button", name="Submit").click()
        sent = "Toolbelt sent {} one small tool request."
        await expect(
            visible(page.get_by_text(sent.format("stub-chat")))
        ).to_be_visible()
        await expect(
            visible(page.get_by_text(re.compile("^No tool call")))
        ).to_be_visible()
        await shot(page, "check")
        say("ok: the check names the model it tried (stub-chat): No tool call")

        await visible(page.get_by_text("Auto (recommended)")).click()
        await expect(visible(page.get_by_text("ReAct Thought"))).to_be_visible()
        await _no_translation_error(page, "with the tool-call format list open")
        await shot(page, "formats")
        hermes = "Hermes <tool_call> JSON"
        await visible(page.get_by_text(hermes)).click()
        await expect(visible(page.get_by_text(hermes))).to_be_visible()
        await _no_translation_error(page, f"after picking {hermes}")
        say("ok: every tool-call format shows its label, before and after picking")

        await visible(page.get_by_text("stub-chat", exact=True)).click()
        await visible(page.get_by_text("stub-hermes", exact=True)).click()
        await page.get_by_role("button", name="Submit").click()
        await expect(
            visible(page.get_by_text(sent.format("stub-hermes")))
        ).to_be_visible()
        await expect(
            visible(page.get_by_text(re.compile("^Text tool calls")))
        ).to_be_visible()
        say("ok: another model and format on the check's form are checked again")

        await visible(page.get_by_text("Auto (the model chooses)")).click()
        await expect(
            visible(page.get_by_text("Required on the first request"))
        ).to_be_visible()
        if await page.get_by_text("required_first", exact=True).count():
            raise AssertionError("Tool choice shows the raw value required_first")
        await shot(page, "tool_choice")
        say("ok: Tool choice lists its labels")
    finally:
        await _close_dialog(page)


async def check_ui(
    url: str,
    user: str,
    password: str,
    shots: Path,  # an existing directory
    *,
    stub_url: str | None,
    assist_says: str,
    say,
) -> list[Path]:
    """Log in and look at the UI; return the screenshots taken, in order.

    With ``stub_url`` (Toolbelt added on the stub model server) it also walks
    Toolbelt's forms (``_walk_forms``).
    """
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
            page.on(
                "console",
                lambda m: (
                    say(f"browser console: {m.text[:300]}")
                    if m.type == "error"
                    else None
                ),
            )
            page.set_default_timeout(TIMEOUT_MS)
            expect.set_options(timeout=TIMEOUT_MS)
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
                integration = "Toolbelt" if stub_url else "Sun"
                await expect(
                    visible(page.get_by_text(integration, exact=True))
                ).to_be_visible()
                await shot(page, "integrations")
                say(f"ok: Settings > Devices & services lists {integration}")

                if stub_url:
                    await _walk_forms(page, url, stub_url, shot, visible, expect, say)

                await page.goto(url)
                await expect(visible(page.get_by_text("Kitchen"))).to_be_visible()
                assist = page.get_by_role("button", name=re.compile(r"^Assist\b"))
                if await assist.count():
                    await assist.first.click()
                else:  # HA 2026.2 labels the toolbar button differently
                    await page.keyboard.press("a")
                box = page.get_by_role("textbox", name=re.compile("request", re.I))
                await box.fill("hello" if stub_url else "turn on the kitchen light")
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
