"""A real browser for the UI tests: Debian's chromium, headless, driven by selenium through
Debian's chromedriver (nothing is downloaded: both paths are given)."""

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

        def shown(_: object) -> bool:
            self._dismiss_newsletter()
            return not self._missing(expect)

        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.5).until(shown)
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

    def _dismiss_newsletter(self) -> None:
        # The open-source UI's first-visit "Join the Dagster community" dialog covers the page.
        # The window is tall because the asset graph only draws the nodes in view.
        for button in self.driver.find_elements(By.XPATH, "//button[normalize-space()='Skip']"):
            if button.is_displayed():
                button.click()


@contextmanager
def chromium(base_url: str, screenshots: Path) -> Iterator[Page]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1600,2000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield Page(driver, base_url, screenshots)
    finally:
        driver.quit()
