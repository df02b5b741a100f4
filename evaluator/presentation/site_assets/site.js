// MathBode leaderboard site: sortable tables, plots from the data embedded in each page, and the
// sweep drill-down. The plots are drawn by plotly.js (assets/plotly.min.js); nothing is fetched.
"use strict";

function cellValue(row, column) {
  const cell = row.children[column];
  if (!cell) return "";
  const value = cell.getAttribute("data-value");
  if (value !== null && value !== "" && !isNaN(Number(value))) return Number(value);
  return cell.textContent.trim().toLowerCase();
}

function sortTable(table, column, header) {
  const body = table.tBodies[0];
  const ascending = header.getAttribute("aria-sort") !== "ascending";
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = cellValue(a, column), y = cellValue(b, column);
    const missing = (v) => v === "" || v === "n/a";
    if (missing(x) !== missing(y)) return missing(x) ? 1 : -1;  // n/a last either way
    if (x < y) return ascending ? -1 : 1;
    if (x > y) return ascending ? 1 : -1;
    return 0;
  });
  rows.forEach((row) => body.appendChild(row));
  table.querySelectorAll("th").forEach((th) => th.removeAttribute("aria-sort"));
  header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
}

function setUpSorting() {
  document.querySelectorAll("table.sortable").forEach((table) => {
    table.querySelectorAll("th button[data-column]").forEach((button) => {
      button.addEventListener("click", () => sortTable(table, Number(button.dataset.column), button.parentElement));
    });
  });
}

// On a phone the mode bar (zoom, pan, download) would sit on the legend: left out there.
const PLOT_CONFIG = { responsive: true, displaylogo: false, displayModeBar: window.innerWidth >= 600 ? "hover" : false };

function drawPlots() {
  document.querySelectorAll("div.plot[data-plot]").forEach((div) => {
    const spec = JSON.parse(document.getElementById(div.dataset.plot).textContent);
    Plotly.newPlot(div, spec.data, spec.layout, PLOT_CONFIG);
  });
}

// The sweep an address names: its fragment percent-decoded, or taken as it is when it is not
// valid percent-encoding (`#%zz`, typed or cut short): a bad address must not stop the page.
function sweepName(hash) {
  const raw = hash.slice(1);
  try {
    return decodeURIComponent(raw);
  } catch (error) {
    return raw;
  }
}

// The Bode plots' toggle: show the measured curves alone, or with each curve's fitted delay or
// low-pass (traces whose `meta` names the model; hidden until chosen).
function setUpOverlays() {
  document.querySelectorAll("fieldset.overlay").forEach((set) => {
    set.addEventListener("change", (event) => {
      const wanted = event.target.value;
      set.dataset.targets.split(" ").forEach((id) => {
        const div = document.getElementById(id);
        if (!div || !div.data) return;
        Plotly.restyle(div, { visible: div.data.map((t) => (t.meta === undefined ? true : t.meta === wanted)) });
      });
    });
  });
}

function drawSweep(div, traces) {
  const wanted = sweepName(location.hash);
  const named = traces.find((t) => t.id === wanted);
  const trace = named || traces[0];
  if (!trace) return;
  const steps = trace.truth.map((_, i) => i);
  const answer = trace.answer.map((v) => (v === null ? null : v));
  Plotly.react(div, [
    { x: steps, y: trace.truth, name: "truth", mode: "lines+markers", marker: { size: 4 } },
    { x: steps, y: answer, name: "answer", mode: "markers", marker: { size: 6, symbol: "x" } },
  ], {
    // Plain tick labels (no SI prefixes), room for them before the title (as the other plots).
    xaxis: { title: { text: "time step" }, exponentformat: "none", automargin: true },
    yaxis: { title: { text: "value" }, exponentformat: "none", automargin: true },
    margin: { t: 60, r: 10, l: 60, b: 50 },
    legend: { orientation: "h", x: 0, y: 1.02, xanchor: "left", yanchor: "bottom" },
  }, PLOT_CONFIG);
  div.dataset.sweep = trace.id;
  const missing = answer.filter((v) => v === null).length;
  const unknown = wanted && !named ? `No sweep is named ${wanted} here; the first is shown. ` : "";
  document.getElementById("drill-caption").textContent = unknown +
    `${trace.id}: ${steps.length - missing} of ${steps.length} steps answered compliantly (x) against the truth (line).`;
  const body = document.querySelector("#drill-table tbody");
  body.replaceChildren(...steps.map((i) => {
    const row = document.createElement("tr");
    [String(i), String(trace.truth[i]), answer[i] === null ? "none" : String(answer[i])].forEach((text) => {
      const td = document.createElement("td");
      td.textContent = text;
      row.appendChild(td);
    });
    return row;
  }));
}

function setUpDrillDown() {
  const div = document.querySelector("div.plot[data-drill]");
  if (!div) return;
  const traces = JSON.parse(document.getElementById(div.dataset.drill).textContent);
  drawSweep(div, traces);
  window.addEventListener("hashchange", () => drawSweep(div, traces));
}

document.addEventListener("DOMContentLoaded", () => {
  setUpSorting();
  if (window.Plotly) {
    drawPlots();
    setUpOverlays();
    setUpDrillDown();
  }
});
