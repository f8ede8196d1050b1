"""The HTML page's constant style and script, and the Content-Security-Policy that lets only them run."""

from __future__ import annotations

import base64
import hashlib

PAGE_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.sortable { cursor: pointer; background: #f3f3f3; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
label { margin-right: 1em; }
img { max-width: 100%; }
.hash { font-family: monospace; }
"""

# Constant: the page's data lives in the HTML tables, never in the script, so no submitted text reaches it.
PAGE_SCRIPT = """
(function () {
  "use strict";
  function byId(id) { return document.getElementById(id); }
  function applyFilters() {
    var release = byId("filter-release").value;
    var split = byId("filter-split").value;
    var relation = byId("filter-relation").value;
    document.querySelectorAll("section.release").forEach(function (s) {
      s.hidden = release !== "" && s.getAttribute("data-release") !== release;
    });
    var provenance = byId("filter-provenance") ? byId("filter-provenance").value : "";
    var clean = byId("filter-clean") ? byId("filter-clean").value : "";
    document.querySelectorAll("tr[data-split]").forEach(function (r) {
      r.hidden = (split !== "" && r.getAttribute("data-split") !== split) ||
        (provenance !== "" && r.getAttribute("data-provenance") !== provenance) ||
        (clean !== "" && r.getAttribute("data-clean") !== clean);
    });
    document.querySelectorAll("[data-relation]").forEach(function (c) {
      c.hidden = relation !== "" && c.getAttribute("data-relation") !== relation;
    });
  }
  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    if (!numeric) { return cell.textContent; }
    var value = cell.getAttribute("data-value");
    return value === null || value === "" ? -Infinity : parseFloat(value);
  }
  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var index = th.cellIndex;
    var numeric = th.getAttribute("data-type") === "number";
    var descending = th.getAttribute("aria-sort") !== "descending";
    table.querySelectorAll("th.sortable").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var ka = cellKey(a, index, numeric), kb = cellKey(b, index, numeric);
      var order = ka < kb ? -1 : ka > kb ? 1 : 0;
      return descending ? -order : order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("th.sortable").forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
  });
  ["filter-release", "filter-split", "filter-relation", "filter-provenance", "filter-clean"].forEach(function (id) {
    if (byId(id)) { byId(id).addEventListener("change", applyFilters); }
  });
})();
"""


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


# Only the page's own script and style may run and nothing may be fetched: even a text that escaped escaping
# could not load or execute anything. A server can send the same policy as a header.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; img-src data:; style-src {_csp_hash(PAGE_STYLE)}; script-src {_csp_hash(PAGE_SCRIPT)}; "
    "base-uri 'none'; form-action 'none'"
)
