#include "framework/metrics/live_page.hpp"

namespace tp {

const std::string& live_page_html() {
    static const std::string page = R"page(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tilepipe live</title>
<style>
body{font:14px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 8px}
.figs span{display:inline-block;margin-right:18px}
.figs b{font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin-top:8px}
td,th{padding:2px 8px;text-align:right;font-variant-numeric:tabular-nums}
th{border-bottom:1px solid #999}
td:first-child,th:first-child{text-align:left}
svg{border:1px solid #ddd;margin-top:8px;background:#fafafa}
.tile{fill:#fff;stroke:#888}
.link{stroke:#4a7;stroke-width:2;marker-end:url(#arrow)}
.label{font-size:11px}
#state{font-weight:bold}
</style></head>
<body>
<h1>tilepipe <span id="app">?</span> &mdash; <span id="state">connecting</span></h1>
<div class="figs">
 <span>elapsed <b id="seconds">0</b> s</span>
 <span>delivered <b id="delivered">0</b> packets</span>
 <span>now <b id="mpps">0</b> Mpps</span>
 <span>offered <b id="offered">0</b> packets</span>
 <span>drops <b id="drops">0</b></span>
</div>
<div class="figs">latency us:
 <span>p50 <b id="p50">-</b></span><span>p90 <b id="p90">-</b></span>
 <span>p99 <b id="p99">-</b></span><span>p999 <b id="p999">-</b></span><span>max <b id="max">-</b></span>
 <span>samples <b id="samples">0</b></span>
</div>
<svg id="graph" width="760" height="200"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5"
 markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#4a7"/></marker></defs></svg>
<svg id="chart" width="760" height="160"></svg>
<table id="nodes"><thead><tr><th>node</th><th>stage</th><th>tile</th><th>cpu</th><th>in</th><th>out</th>
<th>drops</th><th>Mpps</th><th>busy %</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
const NS = "http://www.w3.org/2000/svg";
let last = null;            // the previous read: {seconds, out per node, delivered}
const history = [];         // delivered Mpps per read, for the chart
const fix = (v, d) => Number(v).toFixed(d);
function el(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function set(id, text) { document.getElementById(id).textContent = text; }
// Packets per second between this read and the last one, or over the run when time stood still.
function rate(now, before, seconds, dt) {
  if (before !== undefined && dt > 0) return (now - before) / dt;
  return seconds > 0 ? now / seconds : 0;
}
function drawGraph(r, rates) {
  const svg = document.getElementById("graph");
  while (svg.childNodes.length > 1) svg.removeChild(svg.lastChild);
  const W = 150, H = 64, G = 64;  // G: room for a link's queued/capacity label
  let maxX = 0, maxY = 0;
  for (const t of r.tiles) { maxX = Math.max(maxX, t.tile[0]); maxY = Math.max(maxY, t.tile[1]); }
  svg.setAttribute("width", (maxX + 1) * (W + G) + G);
  svg.setAttribute("height", (maxY + 1) * (H + G) + G);
  const at = {};
  for (const t of r.tiles) at[t.node] = [G + t.tile[0] * (W + G), G + t.tile[1] * (H + G)];
  for (const c of r.channels) {
    const a = at[c.from], b = at[c.to];
    if (!a || !b) continue;
    const line = el("line", {class: "link", x1: a[0] + W, y1: a[1] + H / 2, x2: b[0], y2: b[1] + H / 2});
    if (a[0] >= b[0]) { line.setAttribute("x1", a[0] + W / 2); line.setAttribute("y1", a[1] + H);
                        line.setAttribute("x2", b[0] + W / 2); line.setAttribute("y2", b[1]); }
    svg.appendChild(line);
    if (c.queued >= 0) svg.appendChild(el("text", {class: "label", "text-anchor": "middle", x: (a[0] + W + b[0]) / 2, y: a[1] + H / 2 - 4},
                                          c.queued + "/" + c.capacity));
  }
  for (const t of r.tiles) {
    const [x, y] = at[t.node];
    svg.appendChild(el("rect", {class: "tile", x: x, y: y, width: W, height: H, rx: 4}));
    svg.appendChild(el("text", {class: "label", x: x + 4, y: y + 13}, "[" + t.tile + "] cpu " + t.cpu + (t.role ? " " + t.role : "")));
    svg.appendChild(el("text", {x: x + 4, y: y + 31}, t.node));
    const pps = rates[t.node] !== undefined ? rates[t.node] : 0;
    svg.appendChild(el("text", {class: "label", x: x + 4, y: y + 50},
                        fix(pps / 1e6, 3) + " Mpps, busy " + fix(t.busy_fraction * 100, 1) + "%"));
  }
}
function drawChart() {
  const svg = document.getElementById("chart");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const W = 760, H = 160, top = Math.max(1e-9, ...history) * 1.1;
  svg.appendChild(el("text", {class: "label", x: 4, y: 12}, "delivered Mpps (max " + fix(top / 1.1, 3) + ")"));
  if (history.length < 2) return;
  const step = (W - 8) / (history.length - 1);
  const pts = history.map((v, i) => (4 + i * step) + "," + (H - 4 - (v / top) * (H - 20))).join(" ");
  svg.appendChild(el("polyline", {points: pts, fill: "none", stroke: "#37c", "stroke-width": 2}));
}
function show(r) {
  const dt = last ? r.seconds - last.seconds : 0;
  set("app", r.app);
  set("state", r.state);
  set("seconds", fix(r.seconds, 1));
  set("delivered", r.delivered);
  set("offered", r.packets);
  set("drops", r.drops);
  const mpps = rate(r.delivered, last ? last.delivered : undefined, r.seconds, dt) / 1e6;
  set("mpps", fix(mpps, 3));
  if (dt > 0 || !last) { history.push(mpps); if (history.length > 120) history.shift(); }
  const l = r.latency_us || {};
  for (const k of ["p50", "p90", "p99", "p999", "max"]) set(k, l.samples ? fix(l[k], 2) : "-");
  set("samples", l.samples || 0);
  const rates = {}, body = document.querySelector("#nodes tbody");
  body.textContent = "";
  for (const s of r.stages) {
    const pps = rate(s.out, last ? last.out[s.name] : undefined, r.seconds, dt);
    const tile = r.tiles.find(t => t.tile[0] === s.tile[0] && t.tile[1] === s.tile[1]);
    if (tile) rates[tile.node] = pps;
    const tr = document.createElement("tr");
    tr.dataset.node = s.name;
    for (const [cls, v] of [["name", s.name], ["stage", s.stage], ["tile", "[" + s.tile + "]"], ["cpu", s.cpu],
                            ["in", s.in], ["out", s.out], ["drops", s.drops], ["rate", fix(pps / 1e6, 3)],
                            ["busy", fix(s.busy_fraction * 100, 1)]]) {
      const td = document.createElement("td");
      td.className = cls;
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  drawGraph(r, rates);
  drawChart();
  const out = {};
  for (const s of r.stages) out[s.name] = s.out;
  last = {seconds: r.seconds, delivered: r.delivered, out: out};
}
async function poll() {
  try {
    const resp = await fetch("live.json", {cache: "no-store"});
    show(await resp.json());
  } catch (e) {
    set("state", "not answering (the run has ended?)");
  }
}
poll();
setInterval(poll, 1000);
</script></body></html>
)page";
    return page;
}

}  // namespace tp
