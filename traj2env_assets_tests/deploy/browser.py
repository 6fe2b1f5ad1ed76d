"""A real browser for the UI tests and the README's screenshot (``scripts/screenshot_ui.py``):
Debian's chromium, headless, driven by selenium through Debian's chromedriver (nothing is
downloaded: both paths are given)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


class Page:
    def __init__(self, driver: webdriver.Chrome, base_url: str, screenshots: Path) -> None:
        self.driver, self.base_url, self.screenshots = driver, base_url, screenshots

    def text(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "body").text

    def open(self, path: str, expect: list[str], screenshot: str, timeout: float = 60) -> str:
        """Open ``path``, wait until every string of ``expect`` is on the page, save a screenshot."""
        self.driver.get(self.base_url + path)

        def shown() -> bool:
            dismiss_first_visit_dialog(self.driver)
            return not self._missing(expect)

        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(lambda _: shown())
        except TimeoutException:
            self.driver.save_screenshot(str(self.screenshots / f"{screenshot}-timeout.png"))
            missing = self._missing(expect)
            raise AssertionError(f"{path}: not shown after {timeout:.0f}s: {missing}") from None
        self.driver.save_screenshot(str(self.screenshots / f"{screenshot}.png"))
        return self.text()

    def _missing(self, expect: list[str]) -> list[str]:
        # Compared without whitespace: table cells wrap long task ids.
        shown = "".join(self.text().split())
        return [item for item in expect if "".join(item.split()) not in shown]


def dismiss_first_visit_dialog(driver: webdriver.Chrome) -> None:
    """Close the open-source UI's first-visit "Join the Dagster community" dialog, which
    covers the page."""
    for button in driver.find_elements(By.XPATH, "//button[normalize-space()='Skip']"):
        if button.is_displayed():
            button.click()


@contextmanager
def headless_chromium(*arguments: str) -> Iterator[webdriver.Chrome]:
    """Debian's chromium, headless, with extra command-line ``arguments``; always quit."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", *arguments):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def chromium(base_url: str, screenshots: Path) -> Iterator[Page]:
    # The window is tall because the asset graph only draws the nodes in view.
    with headless_chromium("--window-size=1600,2000") as driver:
        yield Page(driver, base_url, screenshots)
