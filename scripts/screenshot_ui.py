"""Screenshot of the Dagster UI's global asset lineage, for the README (docs/images/).

Start a webserver on a workspace first, e.g. after a cheap run
(`traj2env generate --config examples/trajectory-to-env.yaml --workspace /tmp/ws
--pipeline-opt propose_only=true`):

    DAGSTER_HOME=/tmp/ws/.dagster TRAJ2ENV_WORKSPACE=/tmp/ws \\
        .venv/bin/dagster-webserver -w workspace.yaml -p 3311 &
    .venv/bin/python scripts/screenshot_ui.py --url http://127.0.0.1:3311 --out docs/images/ui-asset-graph.png

Drives Debian's chromium through Debian's chromedriver with selenium, set up by the UI
test's browser module (`traj2env_assets_tests/deploy/browser.py`); nothing is downloaded. The page is shown with
the navigation and the asset tree hidden and every group expanded (the graph's own
"Expand all groups", Alt+E), at an exact viewport size.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from traj2env_assets_tests.deploy.browser import dismiss_first_visit_dialog, headless_chromium

# Assets that must be drawn before the screenshot is taken: both ends of the graph.
EXPECT = ["convert", "publish", "report"]
GROUPS = ["ingest", "report"]


def ready(driver: webdriver.Chrome) -> bool:
    """The lineage page shows its groups (the first-visit dialog, which covers it, dismissed)."""
    dismiss_first_visit_dialog(driver)
    shown = driver.find_element(By.TAG_NAME, "body").text
    return "Global asset lineage" in shown and all(group in shown for group in GROUPS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:3000", help="the webserver's base URL")
    parser.add_argument("--path", default="/asset-groups", help="page to open (default: global asset lineage)")
    parser.add_argument("--out", type=Path, default=Path("docs/images/ui-asset-graph.png"))
    parser.add_argument("--size", default="1400,900", help="viewport size, WIDTH,HEIGHT")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds to wait after the graph is drawn")
    parser.add_argument("--timeout", type=float, default=90.0)
    args = parser.parse_args()

    width, height = (int(n) for n in args.size.split(","))
    with headless_chromium() as driver:
        # The viewport itself, not the window (whose size includes the browser's frame).
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.get(args.url.rstrip("/") + args.path)
        WebDriverWait(driver, args.timeout, poll_frequency=0.5).until(lambda _: ready(driver))
        for button in driver.find_elements(By.XPATH, "//button[normalize-space()='Hide navigation']"):
            button.click()
        # The asset tree's toggle: the icon button on the row of its "Jump to…" box.
        jump = driver.find_elements(By.XPATH, "//input[starts-with(@placeholder, 'Jump to')]")
        if jump:
            row = jump[0].location["y"]
            for button in driver.find_elements(By.TAG_NAME, "button"):
                if button.is_displayed() and not button.text.strip() and abs(button.location["y"] - row) < 20:
                    button.click()
                    break
        time.sleep(1)
        ActionChains(driver).key_down(Keys.ALT).send_keys("e").key_up(Keys.ALT).perform()

        def drawn(_: object) -> bool:
            shown = driver.find_element(By.TAG_NAME, "body").text
            return all(name in shown for name in EXPECT)

        try:
            WebDriverWait(driver, args.timeout, poll_frequency=0.5).until(drawn)
        except TimeoutException:
            driver.save_screenshot(str(args.out.with_suffix(".timeout.png")))
            print(f"not drawn after {args.timeout:.0f}s; see {args.out.with_suffix('.timeout.png')}")
            return 1
        time.sleep(args.settle)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(args.out))
        print(args.out)
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
