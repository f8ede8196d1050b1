"""The search page end to end in headless Chromium (``make browser`` installs Chromium and its driver)."""

import shutil

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture
def browser():
    if not (CHROMIUM and DRIVER):
        pytest.skip("chromium and chromedriver are not installed (make browser installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def test_the_page_searches_and_shows_three_columns_as_text(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 10)
    browser.get(live_server + "/")
    wait.until(lambda d: "8 candidate sentences" in d.find_element(By.ID, "index-info").text)

    browser.find_element(By.ID, "search-button").click()  # empty query: a message, no request
    wait.until(ec.visibility_of_element_located((By.ID, "error")))
    assert "empty" in browser.find_element(By.ID, "error").text

    box = browser.find_element(By.ID, "query")
    box.send_keys("outlier activation channels in quantised language models")
    browser.find_element(By.ID, "search-button").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".column[data-move='specify'] li"))
    assert not browser.find_element(By.ID, "error").is_displayed()
    columns = browser.find_elements(By.CSS_SELECTOR, ".column")
    assert [c.find_element(By.TAG_NAME, "h2").text for c in columns] == ["Address", "Broaden", "Specify"]
    texts = [p.text for p in columns[0].find_elements(By.CSS_SELECTOR, "li .text")]
    assert len(texts) == 8 and texts[0].startswith("Quantised language models lose accuracy")
    assert any("<script>alert('x')</script>" in t for t in texts)  # shown as text, not run
    assert not browser.find_elements(By.CSS_SELECTOR, ".column li script, .column li b")
    links = [a.get_attribute("href") for a in columns[0].find_elements(By.CSS_SELECTOR, ".provenance a")]
    assert (
        "https://arxiv.org/abs/2503.01234" in links and "https://openreview.net/forum?id=AbCdEfGh12" in links
    )
