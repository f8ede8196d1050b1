"""The search page end to end in headless Chromium (``make browser`` installs Chromium and its driver)."""

import pytest
from tests.helpers import browser as page

pytestmark = pytest.mark.slow


@pytest.fixture
def driver():
    if page.chromium_paths() is None:
        pytest.skip("chromium and chromedriver are not installed (make browser installs them)")
    with page.chromium() as d:
        yield d


def test_the_page_searches_and_shows_three_columns_as_text(driver, live_server):
    from selenium.webdriver.common.by import By

    page.open_page(driver, live_server)
    info = driver.find_element(By.ID, "index-info").text
    assert "8 candidate sentences" in info and "titles are not in this index" not in info

    driver.find_element(By.ID, "search-button").click()  # empty query: a message, no request
    assert "empty" in driver.find_element(By.ID, "error").text

    page.submit(driver, "outlier activation channels in quantised language models")
    assert not driver.find_element(By.ID, "error").is_displayed()
    columns = driver.find_elements(By.CSS_SELECTOR, ".column")
    assert [c.find_element(By.TAG_NAME, "h2").text for c in columns] == ["Address", "Broaden", "Specify"]
    texts = [p.text for p in columns[0].find_elements(By.CSS_SELECTOR, "li .text")]
    assert len(texts) == 8 and texts[0].startswith("Quantised language models lose accuracy")
    assert any("<script>alert('x')</script>" in t for t in texts)  # shown as text, not run
    assert not driver.find_elements(By.CSS_SELECTOR, ".column li script, .column li b")
    links = [a.get_attribute("href") for a in columns[0].find_elements(By.CSS_SELECTOR, ".provenance a")]
    assert (
        "https://arxiv.org/abs/2503.01234" in links and "https://openreview.net/forum?id=AbCdEfGh12" in links
    )


def test_a_screenshot_shows_the_answer_and_is_small(bm25_index, tmp_path):
    if page.chromium_paths() is None:
        pytest.skip("chromium and chromedriver are not installed (make browser installs them)")
    from PIL import Image

    out = page.screenshot(bm25_index, "dense retrieval misses rare terms", tmp_path / "shot.png", width=500)
    with Image.open(out) as image:
        assert image.width == 500 and image.height > 200
    assert out.stat().st_size < 300_000
