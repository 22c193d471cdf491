"""The HTML report's inline CSS and JavaScript (sorting, filtering and opening
the results table's rows), kept apart from the Python that writes the markup.

Both are inlined into the page: the Content-Security-Policy allows inline
style and script and nothing else.
"""

STYLE = """
:root{--fg:#1d2433;--muted:#5b6577;--line:#d9dee7;--bg:#fff;--soft:#f5f7fa;--pass:#1a7f37;--fail:#c62828;
--border:#b26a00;--err:#8e24aa;--skip:#607d8b;--accent:#1f5fbf}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:16px 0 8px}h4{margin:12px 0 6px}
.meta{color:var(--muted);margin:2px 0}.muted{color:var(--muted)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{margin:0;white-space:pre-wrap;word-break:break-word;background:var(--soft);padding:6px 8px;border-radius:4px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:130px;background:var(--soft)}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .big{font-size:22px;font-weight:600}.delta{display:block;font-size:12px;font-weight:400;color:var(--muted)}
table{border-collapse:collapse}th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
.breakdown{display:flex;flex-wrap:wrap;gap:24px;margin-top:14px}caption{text-align:left;font-weight:600;padding:4px 0}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;color:#fff;background:var(--skip);white-space:nowrap}
.badge.pass{background:var(--pass)}.badge.fail{background:var(--fail)}.badge.borderline{background:var(--border)}
.badge.error{background:var(--err)}
.change{font-size:12px;font-weight:600;text-transform:uppercase}.change.now_failing{color:var(--fail)}
.change.now_passing{color:var(--pass)}.change.changed{color:var(--border)}.change.new{color:var(--accent)}
.chart{display:block;max-width:100%;height:auto;margin:6px 0}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .axis{fill:var(--muted);font-size:11px}
.chart .value{fill:var(--fg);font-size:12px;font-weight:600}
.chart .bar rect{fill:#9db7e0}.chart .bar.current rect{fill:var(--accent)}.chart .bar.baseline rect{fill:#7a869a}
.chart .tag{font-style:italic}.chart .line{fill:none;stroke:var(--accent);stroke-width:2}
.chart .point circle{fill:var(--accent)}
.filters{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:8px 0}
.filters select,.filters input,.filters button{font:inherit;padding:3px 6px}
table.results{width:100%}table.results th[data-key]{cursor:pointer;user-select:none;white-space:nowrap}
table.results th[aria-sort=ascending]::after{content:" \\25B2"}table.results th[aria-sort=descending]::after{content:" \\25BC"}
button.toggle{white-space:nowrap;font:inherit;font-family:ui-monospace,monospace;background:none;border:0;color:var(--accent);cursor:pointer;padding:0;text-align:left}
button.toggle::before{content:"\\25B8 "}button.toggle[aria-expanded=true]::before{content:"\\25BE "}
tr.detail>td{background:#fbfcfd;padding:10px 14px}
.case-detail dl{display:grid;grid-template-columns:max-content 1fr;gap:6px 14px;margin:0}.case-detail dt{font-weight:600}
.case-detail dd{margin:0;min-width:0}
table.grades{width:100%}table.grades tr.bad td{background:#fff5f5}table.rubric{margin-top:6px}
.reasoning{margin:6px 0 0}
table.diff{width:100%;table-layout:fixed;margin:4px 0 8px}table.diff td{width:50%;padding:0 4px;border:0}
table.diff pre{background:none;padding:1px 4px}table.diff tr.chg td,table.diff tr.add td,table.diff tr.del td{background:#fffbe6}
del{background:#ffd7d5;text-decoration:line-through}ins{background:#ccf0d4;text-decoration:none}
.diff-block{border:1px solid var(--line);border-radius:6px;padding:4px 12px;margin:10px 0}
.diff-block.now_failing{border-left:4px solid var(--fail)}.diff-block.now_passing{border-left:4px solid var(--pass)}
footer{margin-top:32px;color:var(--muted);font-size:12px}
@media print{.filters,button.toggle::before{display:none}tr.detail[hidden]{display:none}}
"""

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("results-table");
  if (!table) { return; }
  var headers = Array.prototype.slice.call(table.tHead.querySelectorAll("th[data-key]"));
  var filters = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var text = document.getElementById("filter-text");
  var count = document.getElementById("results-count");
  function bodies() { return Array.prototype.slice.call(table.tBodies); }
  function numeric(value) { return value === "" || value === undefined ? -Infinity : parseFloat(value); }
  function sortBy(th) {
    var key = th.getAttribute("data-key");
    var isNumber = th.getAttribute("data-type") === "number";
    var direction = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", direction);
    var sign = direction === "ascending" ? 1 : -1;
    var rows = bodies();
    rows.sort(function (a, b) {
      var x = a.getAttribute("data-" + key), y = b.getAttribute("data-" + key), order;
      if (isNumber) { order = numeric(x) - numeric(y); if (isNaN(order)) { order = 0; } }
      else { order = (x || "").localeCompare(y || "", undefined, {numeric: true, sensitivity: "base"}); }
      return order * sign || (parseInt(a.getAttribute("data-order"), 10) - parseInt(b.getAttribute("data-order"), 10));
    });
    rows.forEach(function (row) { table.appendChild(row); });
  }
  headers.forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
    th.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(th); }
    });
  });
  function matches(body) {
    for (var i = 0; i < filters.length; i++) {
      var wanted = filters[i].value, key = filters[i].getAttribute("data-filter");
      if (!wanted) { continue; }
      var value = body.getAttribute("data-" + key);
      if (key === "verdict" && wanted === "nonpass") {
        if (["fail", "borderline", "error"].indexOf(value) < 0) { return false; }
      } else if (value !== wanted) { return false; }
    }
    var needle = text ? text.value.trim().toLowerCase() : "";
    return !needle || (body.getAttribute("data-search") || "").indexOf(needle) >= 0;
  }
  function apply() {
    var all = bodies(), shown = 0;
    all.forEach(function (body) { var ok = matches(body); body.hidden = !ok; if (ok) { shown++; } });
    if (count) { count.textContent = shown + " of " + all.length + " results shown"; }
  }
  filters.forEach(function (select) { select.addEventListener("change", apply); });
  if (text) { text.addEventListener("input", apply); }
  function setOpen(body, open) {
    var detail = body.querySelector("tr.detail"), button = body.querySelector("button.toggle");
    if (detail) { detail.hidden = !open; }
    if (button) { button.setAttribute("aria-expanded", open ? "true" : "false"); }
  }
  table.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.toggle") : null;
    if (!button) { return; }
    var body = button.closest("tbody");
    setOpen(body, body.querySelector("tr.detail").hidden);
  });
  var expand = document.getElementById("expand-all"), collapse = document.getElementById("collapse-all");
  if (expand) { expand.addEventListener("click", function () { bodies().forEach(function (b) { if (!b.hidden) { setOpen(b, true); } }); }); }
  if (collapse) { collapse.addEventListener("click", function () { bodies().forEach(function (b) { setOpen(b, false); }); }); }
  function openFromHash() {
    if (!location.hash || location.hash.indexOf("#case-") !== 0) { return; }
    var body = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (body && body.tagName === "TBODY") { body.hidden = false; setOpen(body, true); }
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
  apply();
})();
"""
