"""A real browser check of the HTML report: headless Chromium through Selenium.

Opens the demo's calculator 1.1.0 report (compared with 1.0.0) and checks that
the results table, the pass-rate chart and the regression diff render, that
sorting and filtering work, that the page logs no console error, and saves a
screenshot to tests/artifacts/report.png (a CI artifact, ignored by git). A
second page, whose output holds a <script> and an <img onerror>, must show them
as text without running them.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (``.ci/run``
installs them) and the Python package ``selenium``; skipped without them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.demo import DEMO_TEST_TIMEOUT_S

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--no-first-run",
                 "--window-size=1280,2000")


def _executable(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _executable("chromium", "chromium-browser")
CHROMEDRIVER = _executable("chromedriver", "chromium-driver")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                       reason="headless browser check needs Chromium: apt-get install chromium chromium-driver"),
]


@pytest.fixture(scope="module")
def driver() -> Iterator[object]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="the browser check needs selenium (pip install selenium)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_page_load_timeout(30)
    try:
        yield browser
    finally:
        browser.quit()


def _severe(browser) -> list[dict]:  # noqa: ANN001
    return [entry for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]


def _visible_rows(browser) -> list[str]:  # noqa: ANN001
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#results-table tbody.case'))"
        ".filter(b => !b.hidden).map(b => b.getAttribute('data-id'));")


@pytest.mark.timeout(DEMO_TEST_TIMEOUT_S)
def test_html_report_renders_in_headless_chromium(driver, tmp_path_factory: pytest.TempPathFactory) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from eval_pipelines.reports.files import write_reports
    from eval_pipelines.store.connection import connect
    from tests.support.demo import build_demo_database

    _, db = build_demo_database(tmp_path_factory)
    out = tmp_path_factory.mktemp("browser-report")
    with connect(db) as con:
        eval_date = con.execute("SELECT max(eval_date) FROM test_results "
                                "WHERE skill_version = 'calculator@1.1.0'").fetchall()[0][0]
    page = write_reports(db, "calculator@1.1.0", eval_date, out, formats=["html"])["html"]
    driver.get_log("browser")  # start from an empty log
    driver.get(page.resolve().as_uri())

    # The results table: one row per case, in suite order.
    table = driver.find_element(By.ID, "results-table")
    assert table.is_displayed()
    assert _visible_rows(driver) == ["tc-001", "tc-002", "tc-003", "tc-004", "tc-005", "tc-006"]

    # The chart: one bar per version, this run highlighted, drawn with a real size.
    chart = driver.find_element(By.ID, "pass-rate-chart")
    assert chart.is_displayed() and chart.size["width"] > 200 and chart.size["height"] > 100
    bars = chart.find_elements(By.CSS_SELECTOR, "g.bar rect")
    assert len(bars) == 2 and all(float(b.get_attribute("height")) > 10 for b in bars)
    assert [g.get_attribute("data-version") for g in chart.find_elements(By.CSS_SELECTOR, "g.bar")] == ["1.0.0", "1.1.0"]

    # The regression diff: tc-002 printed 27.0 where 1.0.0 printed 27.
    diff = driver.find_element(By.CSS_SELECTOR, "#regressions .diff-block.now_failing table.diff")
    assert diff.is_displayed()
    assert diff.find_element(By.CSS_SELECTOR, "td.old pre").text == "27"
    assert diff.find_element(By.CSS_SELECTOR, "td.new ins").text == ".0"
    assert driver.find_element(By.CSS_SELECTOR, "#regressions .diff-block.now_passing").is_displayed()

    # Sorting by score puts the failing case first; a second click reverses.
    header = driver.find_element(By.CSS_SELECTOR, "#results-table th[data-key=score]")
    header.click()
    assert _visible_rows(driver)[0] == "tc-002" and header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert _visible_rows(driver)[-1] == "tc-002"

    # Filters by verdict, category and target.
    Select(driver.find_element(By.ID, "filter-verdict")).select_by_value("fail")
    assert _visible_rows(driver) == ["tc-002"]
    assert driver.find_element(By.ID, "results-count").text == "1 of 6 results shown"
    Select(driver.find_element(By.ID, "filter-verdict")).select_by_value("")
    Select(driver.find_element(By.ID, "filter-category")).select_by_value("arithmetic")
    assert sorted(_visible_rows(driver)) == ["tc-001", "tc-002", "tc-003"]
    Select(driver.find_element(By.ID, "filter-category")).select_by_value("")
    Select(driver.find_element(By.ID, "filter-target")).select_by_value("calc-script")
    assert len(_visible_rows(driver)) == 6
    Select(driver.find_element(By.ID, "filter-change")).select_by_value("now_failing")
    assert _visible_rows(driver) == ["tc-002"]

    # Per-case details open in place: input, output, each assertion with its reasoning, the diff.
    body = driver.find_element(By.ID, "case-tc-002")
    detail = body.find_element(By.CSS_SELECTOR, "tr.detail")
    assert not detail.is_displayed()
    body.find_element(By.CSS_SELECTOR, "button.toggle").click()
    assert detail.is_displayed()
    text = detail.text
    assert "exact_match" in text and "Expected output \"27.0\" to equal \"27\"" in text and "27.0" in text
    assert detail.find_element(By.CSS_SELECTOR, "table.diff").is_displayed()

    ARTIFACTS.mkdir(exist_ok=True)
    Select(driver.find_element(By.ID, "filter-change")).select_by_value("")
    driver.execute_script("window.scrollTo(0, 0);")
    assert driver.save_screenshot(str(ARTIFACTS / "report.png"))
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
    assert _severe(driver) == []


@pytest.mark.timeout(DEMO_TEST_TIMEOUT_S)
def test_every_demo_report_opens_without_console_errors(driver, tmp_path_factory: pytest.TempPathFactory) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    from eval_pipelines.reports.files import write_reports
    from eval_pipelines.store.connection import connect
    from eval_pipelines.analysis.versions import latest_versions
    from tests.support.demo import build_demo_database

    _, db = build_demo_database(tmp_path_factory)
    with connect(db) as con:
        keys = [r[0] for r in con.execute("SELECT DISTINCT skill_version FROM test_results").fetchall()]
        dates = dict(con.execute("SELECT skill_version, max(eval_date) FROM test_results GROUP BY ALL").fetchall())
    out = tmp_path_factory.mktemp("browser-all")
    latest = sorted(latest_versions(keys).values())
    assert len(latest) >= 3
    for key in latest:
        page = write_reports(db, key, dates[key], out, formats=["html"])["html"]
        driver.get_log("browser")
        driver.get(page.resolve().as_uri())
        assert driver.find_element(By.ID, "results-table").is_displayed(), key
        assert driver.find_element(By.ID, "pass-rate-chart").is_displayed(), key
        assert len(_visible_rows(driver)) > 0, key
        assert _severe(driver) == [], key


@pytest.mark.timeout(120)
def test_markup_in_outputs_is_shown_not_run(driver, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    from eval_pipelines.reports.files import write_reports
    from tests.reports.test_reports import XSS, build_widget_db

    db = build_widget_db(tmp_path / "widget.duckdb")
    page = write_reports(db, "widget@1.1.0", "2026-01-02", tmp_path / "out", formats=["html"])["html"]
    driver.get_log("browser")
    driver.get(page.resolve().as_uri())
    assert driver.execute_script("return window.__xss === undefined;")
    assert driver.find_elements(By.CSS_SELECTOR, "#results img") == []
    body = driver.find_element(By.ID, "case-xss-trial-0")
    body.find_element(By.CSS_SELECTOR, "button.toggle").click()
    output = body.find_element(By.CSS_SELECTOR, "pre.output")
    assert output.text == XSS
    assert driver.execute_script("return window.__xss === undefined;")
    assert driver.find_element(By.ID, "pass-rate-by-date-chart").is_displayed()
    driver.save_screenshot(str(tmp_path / "widget.png"))
    assert _severe(driver) == []
