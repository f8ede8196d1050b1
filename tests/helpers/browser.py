"""Driving the search page in headless Chromium: the browser test and ``make screenshot`` share this code.

Selenium and a Chromium with its driver (Debian's ``chromium`` and ``chromium-driver``, ``make browser``) are
needed only here, so they are imported lazily and their absence is a one-line error naming the fix.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ratio_bench.core.errors import RatioError

SHOT_SIZE = (1400, 900)  # the window the screenshot is taken in: three columns side by side
SHOT_WIDTH = 1000  # the committed PNG's width (a few hundred KB at most)


def chromium_paths() -> tuple[str, str] | None:
    """Chromium's binary and its driver, when both are on PATH."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (binary, driver) if binary and driver else None


@contextmanager
def chromium(size: tuple[int, int] = SHOT_SIZE) -> Iterator:
    """A headless Chromium WebDriver with a fixed window, quit on exit."""
    paths = chromium_paths()
    if paths is None:
        raise RatioError("chromium and chromedriver are not on PATH; install them with `make browser`")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={size[0]},{size[1]}")
    driver = webdriver.Chrome(service=Service(paths[1]), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def serve_in_thread(app) -> Iterator[str]:
    """``app`` on a free loopback port, served by uvicorn in a thread; yields its base URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RatioError("the search app did not start (see the log above)")
        thread.join(0.05)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


def open_page(driver, base_url: str, timeout: float = 30) -> None:
    """Load the page and wait until it has described its index."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(base_url + "/")
    WebDriverWait(driver, timeout).until(
        lambda d: "candidate sentences" in d.find_element(By.ID, "index-info").text
    )


def submit(driver, text: str, timeout: float = 30) -> None:
    """Type ``text`` into the box, press Search, and wait for the answer (results or an error)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    box = driver.find_element(By.ID, "query")
    box.clear()
    box.send_keys(text)
    driver.find_element(By.ID, "search-button").click()

    def answered(d) -> bool:
        return bool(
            d.find_elements(By.CSS_SELECTOR, ".column li") or d.find_element(By.ID, "error").is_displayed()
        )

    WebDriverWait(driver, timeout).until(answered)


def screenshot(index: Path, text: str, out: Path, width: int = SHOT_WIDTH, k: int = 5) -> Path:
    """Serve ``index``, search ``text`` in headless Chromium (``k`` results per move) and save a PNG at ``out``.

    The window is :data:`SHOT_SIZE`; the PNG is scaled to ``width`` pixels wide and written atomically.
    """
    from PIL import Image
    from selenium.webdriver.common.by import By

    from ratio_bench.core.io import atomic_path
    from ratio_bench.serve.app import create_app
    from ratio_bench.serve.index import load_index
    from ratio_bench.serve.search import Searcher

    app = create_app(Searcher(load_index(index)))
    with serve_in_thread(app) as url, chromium() as driver:
        open_page(driver, url)
        k_box = driver.find_element(By.ID, "k")
        k_box.clear()
        k_box.send_keys(str(k))
        submit(driver, text)
        if driver.find_element(By.ID, "error").is_displayed():
            raise RatioError(f"the page answered with an error: {driver.find_element(By.ID, 'error').text}")
        png = driver.get_screenshot_as_png()
    import io

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
    image = image.quantize(colors=128)  # a page of text: a palette keeps the PNG small
    with atomic_path(out) as tmp:
        image.save(tmp, format="PNG", optimize=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.helpers.browser --index IDX --out docs/search.png "TEXT"`` (``make screenshot``)."""
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("text", help="the problem sentence typed into the page")
    p.add_argument("--index", type=Path, required=True, help="an index folder built by `ratio index`")
    p.add_argument("--out", type=Path, required=True, help="the PNG to write")
    p.add_argument("--width", type=int, default=SHOT_WIDTH, help=f"PNG width (default: {SHOT_WIDTH})")
    p.add_argument("--k", type=int, default=5, help="results per move (default: 5)")
    args = p.parse_args(argv)
    try:
        out = screenshot(args.index, args.text, args.out, args.width, args.k)
    except RatioError as e:
        p.exit(1, f"{p.prog}: error: {e}\n")
    print(f"{out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
