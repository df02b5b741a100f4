"""The leaderboard site in a real browser: headless Chromium opens every page of sites of 1, 2 and
10 submissions (one with no compliant answer, one of chirp and step rows only, one sequential).

Needs Debian's `chromium` and `chromium-driver` (README, "The leaderboard site"); .ci/run installs
them and sets MATHBODE_REQUIRE_BROWSER=1, so there a missing browser fails instead of skipping.
Screenshots of the leaderboard and a submission page at a phone's and a wide screen's width are
kept in tests/artifacts/site/ (ignored by git).
"""

from __future__ import annotations

import base64
import cmath
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from .site_fixtures import score, site, submissions

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "site"
WIDTHS = {"phone": (390, 844), "wide": (1440, 900)}

if not (CHROMIUM and CHROMEDRIVER):
    if os.environ.get("MATHBODE_REQUIRE_BROWSER") == "1":
        raise RuntimeError("MATHBODE_REQUIRE_BROWSER=1 but chromium or chromedriver is not on PATH")
    pytest.skip(
        "the site's browser tests need chromium and chromedriver on PATH (Debian: apt-get install chromium "
        "chromium-driver)",
        allow_module_level=True,
    )

webdriver = pytest.importorskip("selenium.webdriver")


@pytest.fixture(scope="module")
def sites(reference, tmp_path_factory):
    """Sites of 1, 2 and 10 submissions, from report folders scored from the packaged rows."""
    root = tmp_path_factory.mktemp("site")
    subs = submissions(reference, root / "subs")
    one = score([subs["exact"]], root / "r1", "--no-plots")
    two = score([subs["noisy-0"], subs["noisy-1"]], root / "r2", "--no-plots", "--bootstrap", "200")
    ten = score([p for name, p in subs.items() if name != "exact"], root / "r10", "--no-plots", "--bootstrap", "200")
    return {
        1: site([one], root / "s1"),
        2: site([two], root / "s2"),
        10: site([ten, one], root / "s10"),  # two results folders: 9 + 1 submissions
    }


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="mathbode-chromium-")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1440,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _open(driver, path: Path, fragment: str = "") -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get_log("performance")
    driver.get(path.as_uri() + (f"#{fragment}" if fragment else ""))
    driver.execute_async_script(
        "const done = arguments[0];"
        "const ready = () => document.querySelectorAll('div.plot').length === "
        "document.querySelectorAll('div.plot.js-plotly-plot').length;"
        "const wait = (n) => (ready() || n > 200) ? done() : setTimeout(() => wait(n + 1), 50);"
        "wait(0);"
    )


def _problems(driver) -> list[str]:
    """Console errors and warnings, and failed requests, since the page was opened."""
    said = [f"console {e['level']}: {e['message']}" for e in driver.get_log("browser") if e["level"] != "INFO"]
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.loadingFailed":
            said.append(f"failed request: {message['params'].get('errorText')}")
        if message["method"] == "Network.responseReceived" and message["params"]["response"]["status"] >= 400:
            said.append(f"request {message['params']['response']['url']}: {message['params']['response']['status']}")
    return said


def _links(driver) -> list[str]:
    return driver.execute_script("return Array.from(document.querySelectorAll('a[href]'), a => a.href)")


def _crawl(driver, index: Path) -> dict[Path, list[str]]:
    """Open every page reachable from the index; per page, what went wrong on it (nothing, for all)."""
    root = index.parent.resolve()
    seen: dict[Path, list[str]] = {}
    queue = [index.resolve()]
    while queue:
        page = queue.pop()
        if page in seen:
            continue
        _open(driver, page)
        found = _problems(driver)
        for href in _links(driver):
            url = urlparse(href)
            if url.scheme != "file":
                if url.netloc not in ("plotly.com",):  # the footer's credit: never requested by the page
                    found.append(f"link off the site: {href}")
                continue
            target = Path(unquote(url.path))
            if not target.is_file():
                found.append(f"broken link: {href}")
                continue
            assert root in target.resolve().parents, href
            if url.fragment and target.suffix == ".html":
                if f'id="{url.fragment}"' not in target.read_text(encoding="utf-8"):
                    found.append(f"link to a missing anchor: {href}")
            if target.suffix == ".html":
                queue.append(target.resolve())
        seen[page] = found
    return seen


@pytest.mark.parametrize("count", [1, 2, 10])
def test_every_page_loads_without_an_error_and_every_link_resolves(browser, sites, count):
    pages = _crawl(browser, sites[count] / "index.html")
    assert {page: problems for page, problems in pages.items() if problems} == {}
    submissions = 9 + 1 if count == 10 else count
    assert len([p for p in pages if p.parent.name == "submissions"]) == submissions
    assert len([p for p in pages if p.parent.name == "sweeps"]) == submissions
    assert len([p for p in pages if p.parent.name == "families"]) == 5


def _column(driver, table_id: str, column: int) -> list[str]:
    return driver.execute_script(
        f"return Array.from(document.querySelectorAll('#{table_id} tbody tr'), "
        f"tr => tr.children[{column}].getAttribute('data-value') ?? tr.children[{column}].textContent)"
    )


def test_sorting_the_leaderboard_reorders_it(browser, sites):
    _open(browser, sites[10] / "index.html")
    ranked = _column(browser, "leaderboard-1", 4)  # MB-Core, best first
    names = _column(browser, "leaderboard-1", 1)
    known = [float(v) for v in ranked if v != "n/a"]
    assert len(known) >= 6 and ranked[len(known) :] == ["n/a"]  # the file with no compliant answer: last
    assert known == sorted(known, reverse=True)
    browser.find_element("css selector", "#leaderboard-1 th:nth-child(5) button").click()
    ascending = _column(browser, "leaderboard-1", 4)
    assert [float(v) for v in ascending if v != "n/a"] == sorted(known) and ascending[-1] == "n/a"  # n/a stays last
    assert _column(browser, "leaderboard-1", 1) != names
    header = browser.find_element("css selector", "#leaderboard-1 th:nth-child(5)")
    assert header.get_attribute("aria-sort") == "ascending"
    browser.find_element("css selector", "#leaderboard-1 th:nth-child(2) button").click()
    assert _column(browser, "leaderboard-1", 1) == sorted(names, key=str.lower)


def test_the_leaderboard_groups_conditions_and_shows_ties_and_intervals(browser, sites):
    _open(browser, sites[10] / "index.html")
    headings = [h.text for h in browser.find_elements("css selector", "main section h2")]
    assert any("protocol stateless" in h for h in headings) and any("protocol sequential" in h for h in headings)
    assert "Not ranked: no sinusoid sweeps" in headings
    cells = browser.find_elements("css selector", "#leaderboard-1 tbody td:nth-child(5)")
    assert all("[" in c.text for c in cells if c.text != "n/a"), [c.text for c in cells]  # 95 % intervals
    ranks = [c.text for c in browser.find_elements("css selector", "#leaderboard-1 tbody td:nth-child(1)")]
    assert ranks[0].startswith("1")


def _document(site: Path, slug: str) -> dict:
    return json.loads((site / "data" / slug / "results.json").read_text())


def _same(shown: list, expected: list) -> bool:
    return len(shown) == len(expected) and all(
        (a is None and (b is None or b != b)) or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12))
        for a, b in zip(shown, expected, strict=True)
    )


def test_each_plot_renders_with_its_data(browser, sites):
    site_dir = sites[10]
    _open(browser, site_dir / "submissions" / "noisy-0.html")
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.plot'), d => ({id: d.id, "
        "traces: d.data.map(t => ({name: t.name, y: t.y})), "
        "points: d.querySelectorAll('.scatterlayer .point').length, "
        "log: d.layout.yaxis.type, alt: d.getAttribute('aria-label')}))"
    )
    assert [p["id"] for p in plots] == ["bode-gain", "bode-phase"]
    summary = _document(site_dir, "noisy-0")["tables"]["summary"]
    columns = {c["name"]: c["values"] for c in summary["columns"]}
    for trace in plots[0]["traces"]:
        rows = [i for i, f in enumerate(columns["family"]) if f == trace["name"]]
        assert _same(trace["y"], [columns["gain"][i] for i in rows])
    assert plots[0]["log"] == "log"
    assert all(p["points"] > 0 and p["alt"] for p in plots)
    # Error bars: the noisy runs were scored with intervals.
    bars = browser.execute_script("return document.getElementById('bode-gain').data[0].error_y.array.length")
    assert bars == len(plots[0]["traces"][0]["y"])
    _open(browser, site_dir / "submissions" / "chirp-step-only.html")
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.plot'), d => [d.id, d.querySelectorAll('.point').length])"
    )
    assert [name for name, _ in shown] == ["transient-step", "transient-chirp"]
    assert all(points > 0 for _, points in shown)


def test_hovering_a_point_shows_its_value(browser, sites):
    _open(browser, sites[1] / "submissions" / "exact.html")
    text = browser.execute_script(
        "const d = document.getElementById('bode-gain');"
        "Plotly.Fx.hover(d, [{curveNumber: 0, pointNumber: 0}]);"
        "return Array.from(d.querySelectorAll('.hoverlayer text'), t => t.textContent).join(' ');"
    )
    assert "cycles: 1.0000" in text


def test_the_drill_down_shows_the_answers_of_the_sweep_it_names(browser, sites):
    site_dir = sites[10]
    traces = _document(site_dir, "noisy-3")["traces"]
    chosen = traces[len(traces) // 2]
    _open(browser, site_dir / "sweeps" / "noisy-3.html", chosen["id"])
    drawn = browser.execute_script(
        "const d = document.getElementById('drill');"
        "return {sweep: d.dataset.sweep, truth: d.data[0].y, answer: d.data[1].y, "
        "rows: document.querySelectorAll('#drill-table tbody tr').length, "
        "points: d.querySelectorAll('.scatterlayer .point').length}"
    )
    assert drawn["sweep"] == chosen["id"]
    assert _same(drawn["answer"], chosen["answer"])
    assert _same(drawn["truth"], [round(v, 7) for v in chosen["truth"]])  # shown to 7 decimals
    assert drawn["rows"] == 64 and drawn["points"] > 64
    assert any(a != t for a, t in zip(chosen["answer"], chosen["truth"], strict=True))  # a noisy sweep
    # Following another sweep's link redraws the plot with that sweep's answers.
    other = traces[0]
    browser.find_element("css selector", f'a[href="#{other["id"]}"]').click()
    assert browser.execute_script("return document.getElementById('drill').dataset.sweep") == other["id"]


def test_no_compliant_answers_is_said_first(browser, sites):
    _open(browser, sites[10] / "submissions" / "never-compliant.html")
    alert = browser.find_element("css selector", "p.alert").text
    assert alert.startswith("0 of 5,760 answers were compliant")
    assert _problems(browser) == []


def _screenshot(driver, path: Path, size: tuple[int, int]) -> None:
    """The whole page (up to 6,000 px tall) at the window's width."""
    height = min(driver.execute_script("return document.documentElement.scrollHeight"), 6000)
    clip = {"x": 0, "y": 0, "width": size[0], "height": height, "scale": 1}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    path.write_bytes(base64.b64decode(shot["data"]))


def test_screenshots_at_two_widths(browser, sites):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pages = {"leaderboard": sites[10] / "index.html", "submission": sites[10] / "submissions" / "noisy-1.html"}
    try:
        for name, page in pages.items():
            for width, size in WIDTHS.items():
                browser.set_window_size(*size)
                _open(browser, page)
                overflow = browser.execute_script(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 1, f"{name} at {width} width scrolls sideways by {overflow} px"
                path = ARTIFACTS / f"{name}-{width}.png"
                _screenshot(browser, path, size)
                assert path.stat().st_size > 10_000
    finally:
        browser.set_window_size(*WIDTHS["wide"])


def test_a_group_heading_holding_a_release_hash_does_not_widen_a_phone_page(browser, sites, tmp_path):
    """At 390 px the leaderboard scrolled sideways when a group's heading held a release's content
    hash (71 characters without a space) (issue 40)."""
    report = tmp_path / "r"
    shutil.copytree(sites[1].parent / "r1", report)
    document = json.loads((report / "results.json").read_text())
    document["scores"]["conditions"]["release_content_hash"] = "sha256:" + "0123456789abcdef" * 4
    (report / "results.json").write_text(json.dumps(document))
    built = site([report], tmp_path / "s")
    try:
        browser.set_window_size(*WIDTHS["phone"])
        _open(browser, built / "index.html")
        heading = browser.find_element("css selector", "main section h2").text
        assert "0123456789abcdef" in heading.replace("\n", "")
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1, f"the leaderboard at 390 px scrolls sideways by {overflow} px"
    finally:
        browser.set_window_size(*WIDTHS["wide"])


def test_the_bode_plots_overlay_the_fitted_delay_or_low_pass_with_a_toggle(browser, sites):
    """A sequential submission's page shows its Dynamics table and a toggle: "fitted delay" shows
    each family's delay curve (gain 1, phase -360 f d / 64 wrapped), "fitted low-pass" its
    low-pass, "measured only" neither; the measured curves stay. A stateless page has no toggle."""
    site_dir = sites[10]
    found = _document(site_dir, "sequential")["scores"]["dynamics"]
    _open(browser, site_dir / "submissions" / "sequential.html")
    table = browser.execute_script(
        "return Array.from(document.querySelectorAll('#dynamics-table tbody tr'), r => r.children[1].textContent)"
    )
    assert table == [d["verdict"] for d in found.values()]
    shown = (
        "return document.getElementById('bode-phase').data.filter(t => t.visible !== false)"
        ".map(t => [t.name, t.meta || '', t.x, t.y])"
    )
    assert {meta for _, meta, _, _ in browser.execute_script(shown)} == {""}  # measured only
    for choice in ("delay", "low-pass", ""):
        browser.find_element("css selector", f'fieldset.overlay input[value="{choice}"]').click()
        traces = browser.execute_script(shown)
        assert len([t for t in traces if t[1] == ""]) == len(found)
        fitted = [t for t in traces if t[1]]
        assert {t[1] for t in fitted} == ({choice} if choice else set())
        assert len(fitted) == (len(found) if choice else 0)
        if not choice:
            continue
        for (name, _, x, y), (family, d) in zip(fitted, found.items(), strict=True):
            assert name.startswith(f"{family}: fitted {choice}")
            f, phase = x[0], y[0]
            if choice == "delay":
                expected = (-360 * f * d["delay_steps"] / 64 + 180) % 360 - 180
            else:
                a = d["low_pass_a"]
                expected = math.degrees(cmath.phase(a / (1 - (1 - a) * cmath.exp(-2j * math.pi * f / 64))))
            assert phase == pytest.approx(expected, abs=1e-4), (family, choice)
    assert _problems(browser) == []
    _open(browser, site_dir / "submissions" / "noisy-0.html")
    assert browser.execute_script("return document.querySelectorAll('fieldset.overlay, #dynamics-table').length") == 0


@pytest.fixture(scope="module")
def multitone_site(tmp_path_factory):
    """A site of one scored multi-tone submission: a static cubic y = x + s b u^3 of the exact answers
    (test_multitone.py's, written directly, no server) on a linear_solve multi-tone release."""
    import pyarrow.parquet as pq

    from mathbode.builder.families import get_family
    from mathbode.builder.release import build_release

    from .test_multitone import FAMILY, _cubic_predictions

    root = tmp_path_factory.mktemp("mt-site")
    build_release([get_family(FAMILY)], root / "release", drives="multitone")
    rows = pq.read_table(root / "release" / "data" / f"{FAMILY}.parquet").to_pylist()
    file = _cubic_predictions(rows, root / "cubic.jsonl")
    report = score([file], root / "r", "--reference", str(root / "release"), "--no-plots")
    return site([report], root / "s")


def test_a_multitone_submission_shows_its_bla_and_two_tone_spectrum(browser, multitone_site):
    """The submission's page draws, per family, the BLA (gain in dB and phase, each with its 95 %
    interval) with the noise, stochastic, even- and odd-added levels and the truncation floor, and
    the two-tone spectrum: every trace holds the results document's numbers, the verdict is said."""
    reading = _document(multitone_site, "cubic")["scores"]["multitone"]["families"]
    assert list(reading) == ["linear_solve"]
    m = reading["linear_solve"]
    _open(browser, multitone_site / "submissions" / "cubic.html")
    assert _problems(browser) == []
    compliance = browser.find_element("xpath", "//h2[@id='compliance']/..").text
    assert "No answers in scope: compliance is counted on sinusoid rows, and this file has none." in compliance
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.plot'), d => ({id: d.id, "
        "traces: d.data.map(t => ({name: t.name, meta: t.meta, x: t.x, y: t.y, axis: t.yaxis || 'y', "
        "text: t.text || null, above: t.error_y ? t.error_y.array : null, below: t.error_y ? t.error_y.arrayminus : "
        "null})), points: d.querySelectorAll('.scatterlayer .point').length, "
        "caption: d.closest('figure').querySelector('figcaption').textContent}))"
    )
    assert [p["id"] for p in plots] == ["multitone-0-bla", "multitone-0-two-tone"]  # no Bode plot: no sinusoids
    bla, two = ({t["meta"]: t for t in p["traces"]} for p in plots)
    assert all(p["points"] > 0 for p in plots)
    assert plots[0]["caption"].startswith(f"linear_solve: {m['verdict']}.")
    assert m["verdict"].startswith("static nonlinearity (odd)")  # the cubic: its own kind of line
    excited = [line for line in m["lines"] if line["kind"] == "excited"]
    intervals = m["bla_intervals"]
    assert bla["gain"]["x"] == [line["cycles"] for line in excited] == [1, 3, 7, 9, 13, 15]
    # The gain in linear units on an axis of its own, its interval readable (not a dB level beside -130 dB ones).
    gain = [line["gain"] for line in excited]
    assert _same(bla["gain"]["y"], gain) and bla["gain"]["axis"] == "y"
    assert _same(
        [g + a for g, a in zip(gain, bla["gain"]["above"], strict=True)], [iv["gain_high"] for iv in intervals]
    )
    assert _same([g - b for g, b in zip(gain, bla["gain"]["below"], strict=True)], [iv["gain_low"] for iv in intervals])
    assert bla["phase"]["axis"] == "y2" and _same(bla["phase"]["y"], [line["phase_deg"] for line in excited])
    phase = [line["phase_deg"] for line in excited]
    assert _same(
        [p + a for p, a in zip(phase, bla["phase"]["above"], strict=True)], [iv["phase_high_deg"] for iv in intervals]
    )
    assert _same(
        [p - b for p, b in zip(phase, bla["phase"]["below"], strict=True)], [iv["phase_low_deg"] for iv in intervals]
    )
    for key in ("noise_db", "stochastic_db"):
        assert bla[key]["x"] == bla["gain"]["x"] and _same(bla[key]["y"], [iv[key] for iv in intervals])
        assert bla[key]["axis"] == "y3"
    for kind in ("even", "odd"):
        detect = [line for line in m["lines"] if line["kind"] == kind]
        assert detect and bla[f"{kind}_added_db"]["x"] == [line["cycles"] for line in detect]
        assert _same(bla[f"{kind}_added_db"]["y"], [line["added_db"] for line in detect])
    assert bla["floor_db"]["y"] == [m["floor_db"], m["floor_db"]]
    assert bla["floor_db"]["x"] == [
        min(line["cycles"] for line in m["lines"]),
        max(line["cycles"] for line in m["lines"]),
    ]
    # The odd cubic adds more on the odd detection lines than on the even, and above the floor.
    assert max(bla["odd_added_db"]["y"]) > max(bla["even_added_db"]["y"]) > m["floor_db"]
    products = m["two_tone"]
    assert set(two) == {"level_db", "truth_level_db", "error_level_db", "added_db"}
    for key, trace in two.items():
        assert trace["x"] == [p["cycles"] for p in products] and trace["text"] == [p["product"] for p in products]
        assert _same(trace["y"], [p[key] for p in products])
    assert {"f1", "f2", "2f1-f2", "2f2-f1"} <= set(two["level_db"]["text"])
    # Each axis at least as wide as the ideal +- a span, never a magnified rounding error.
    ranges = browser.execute_script(
        "const l = document.getElementById('multitone-0-bla').layout;"
        "return [l.yaxis.range, l.yaxis2.range, l.yaxis3.range]"
    )
    assert ranges[0][0] <= 0.95 and ranges[0][1] >= 1.05 and ranges[1][0] <= -5 and ranges[1][1] >= 5
    # The levels: down to 25 dB under the floor, up to 5 dB over the exact answers' level (0 dB).
    assert max(bla["odd_added_db"]["y"]) < 0 and ranges[2] == [pytest.approx(m["floor_db"] - 25), 5]
    table = browser.execute_script(
        "return Array.from(document.querySelectorAll('#multitone-table tbody tr'), "
        "r => Array.from(r.children, c => c.textContent))"
    )
    assert table == [
        [
            "linear_solve",
            m["verdict"],
            *(f"{m[k]:.1f}" for k in ("distortion_db", "even_added_db", "odd_added_db", "floor_db")),
            # A deterministic model's periods agree: no noise, so its added level is beyond it.
            "none",
            "yes",
            "not read (stateless)",
        ]
    ]
    notes = browser.execute_script("return Array.from(document.querySelectorAll('ul.notes li'), li => li.textContent)")
    assert any(n.startswith("What the multi-tone reading can show (stateless protocol)") for n in notes)


def test_a_submission_without_a_multitone_reading_draws_no_multitone_plot(browser, sites):
    _open(browser, sites[1] / "submissions" / "exact.html")
    found = "return document.querySelectorAll('[id^=multitone], ul.notes li').length"
    assert browser.execute_script("return document.querySelectorAll('[id^=multitone]').length") == 0
    assert "multi-tone" not in browser.find_element("css selector", "main").text
    assert browser.execute_script(found) > 0  # the page itself is there, with its notes


def _tick_texts(driver, plot: str, axis: str) -> list[str]:
    return driver.execute_script(
        f"return Array.from(document.querySelectorAll('#{plot} .{axis}tick text'), t => t.textContent)"
    )


def test_the_exact_answers_plots_do_not_magnify_rounding(browser, sites):
    """The exact answers' phase axis read "400f, 200f" (plotly's femto prefix) with error bars of
    1e-13 degrees filling the plot, its gain axis 0.9998 to 1.00015: each axis now spans at least
    what the report's bode.png does (gain 0.8 to 1.25 over 1.3, phase +-10 degrees) with plain labels."""
    _open(browser, sites[1] / "submissions" / "exact.html")
    axes = browser.execute_script(
        "return ['bode-gain', 'bode-phase'].map(id => document.getElementById(id).layout)"
        ".map(l => [l.yaxis.range, l.yaxis.exponentformat, l.xaxis.exponentformat])"
    )
    (gain_range, *gain_formats), (phase_range, *phase_formats) = axes
    assert gain_range == [pytest.approx(math.log10(0.8 / 1.3)), pytest.approx(math.log10(1.25 * 1.3))]
    assert phase_range == [pytest.approx(-11.6), pytest.approx(11.6)]  # +-10 and 8 % of the span
    assert gain_formats == phase_formats == ["none", "none"]
    # U+2212 is plotly's minus sign.
    assert _tick_texts(browser, "bode-phase", "y") == ["\u221210", "\u22125", "0", "5", "10"]
    assert _tick_texts(browser, "bode-gain", "y") == ["0.8", "1", "1.2", "1.4", "1.6"]


def test_a_family_page_fits_a_wide_window_and_its_axis_titles_clear_their_labels(browser, sites, tmp_path):
    """At 1,400 px a family page's table ran past the right edge (conditions naming a release and its
    content hash, unwrapped), and the gain axis title was drawn over its tick labels."""
    report = tmp_path / "r"
    shutil.copytree(sites[1].parent / "r1", report)
    document = json.loads((report / "results.json").read_text())
    document["scores"]["conditions"].update(release="MathBode-GAP", release_content_hash="sha256:" + "0123abcd" * 8)
    (report / "results.json").write_text(json.dumps(document))
    built = site([report, sites[2].parent / "r2"], tmp_path / "s")
    try:
        browser.set_window_size(1400, 900)
        _open(browser, built / "families" / "linear_solve.html")
        right, room = browser.execute_script(
            "const t = document.getElementById('submissions-table');"
            "return [t.getBoundingClientRect().right, t.parentElement.getBoundingClientRect().right]"
        )
        assert right <= room + 1, f"the table runs {right - room:.0f} px past its box"
        for plot in ("family-gain", "family-phase"):
            title, labels = browser.execute_script(
                f"const d = document.getElementById('{plot}');"
                "return [d.querySelector('.g-ytitle text').getBoundingClientRect().right, "
                "Math.min(...Array.from(d.querySelectorAll('.ytick text'), t => t.getBoundingClientRect().left))]"
            )
            assert title <= labels, f"{plot}: the axis title overlaps its tick labels by {title - labels:.1f} px"
    finally:
        browser.set_window_size(*WIDTHS["wide"])


@pytest.fixture(scope="module")
def paired_site(tmp_path_factory):
    """A site of a paired release's exact answers (linear_solve and its five variants, MVP)."""
    from click.testing import CliRunner

    from mathbode.cli.main import mathbode

    root = tmp_path_factory.mktemp("paired-site")
    release, answers = root / "release", root / "exact.jsonl"
    for argv in (
        ["build", "--variants", "gap", "--families", "linear_solve", "--out", str(release), "-q"],
        ["baseline", "--reference", str(release), "--preset", "MVP", "-o", str(answers)],
    ):
        result = CliRunner().invoke(mathbode, argv)
        assert result.exit_code == 0, result.output
    return site([score([answers], root / "r", "--reference", str(release), "--no-plots")], root / "s")


def test_a_paired_submission_has_a_page_read_in_pairs(browser, paired_site):
    """The paired page loads without an error from the submission's page, says GAP's headline, shows
    the paired table with its McNemar counts, and draws the original's Bode curves beside its variants'."""
    pages = _crawl(browser, paired_site / "index.html")
    assert {page: problems for page, problems in pages.items() if problems} == {}
    (page,) = [p for p in pages if p.parent.name == "paired"]
    _open(browser, page)
    headline = browser.find_element("css selector", "p.headline").text
    assert headline.startswith("DL 0.0 pp [0.0, 0.0]; DLC 0.0 pp [0.0, 0.0]; DLM 0.0 pp [0.0, 0.0]; GS 0.0 pp")
    rows = _column(browser, "variants-table", 7)
    assert rows == ["1.0000 (1.0000) [0/0]"] * 5
    plots = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.plot'), d => [d.id, d.data.map(t => t.name)])"
    )
    names = [
        "linear_solve",
        *(f"{k}: linear_solve__{k.lower()}" for k in ("DL", "DLC", "DLM", "GS")),
        "kernel: linear_solve__kernel",
    ]
    assert plots == [["paired-0-gain", names], ["paired-0-phase", names]]
