#!/usr/bin/python3
"""tilepipe plot: draws the JSON tilepipe writes as a PNG (run by `tilepipe plot REPORT.json -o OUT.png`).

What it draws, by the kind of JSON (found from its keys, never from the file name):
  run report (`tilepipe run --json`)       the app's mesh, each tile coloured by its busy share and each
                                            channel drawn along its XY route with its hop count; cycles per
                                            packet per stage; with `latency_us` buckets, the latency CDF;
                                            an app that branches (`edges` naming outputs other than `out`):
                                            its graph, each edge labelled with its output and Mpps.
                                            1400 x 1000 px.
  interval stats (`--stats-interval`)      Mpps and each tile's busy share per interval. 1200 x 800 px.
  topology (`tilepipe topo --json`)        the mesh with each node on its tile, coloured by thread. 1000 x 600 px.
  bench report (`tilepipe bench NAME --json`), 1000 x 600 px, mapvec 1400 x 600 px:
    pingpong  one-way latency per transport (bars, min-max whiskers)
    asym      one-way latency against the number of senders, per transport
    stream    Mmsgs/s against the burst size, per transport
    mapvec    T_S and scalability against workers, per variant
    latency   latency (p50, p90, p99, p999) against the offered load
    scaling   a measure against workers or ranks, one curve per series (scripts/bench_scaling.sh
              gathers them: `x` and `y` name the row fields, `xlabel`, `ylabel`, `title` the axes)

Fields a report may lack (older or newer tilepipe) are drawn around, not required. A file of another
kind, or one missing what its kind needs, is refused naming what was wrong: exit status 2.
Matplotlib missing: exit status 1 saying how to install it.
"""

import argparse
import json
import math
import os
import re
import sys

DPI = 100
TOPOLOGY_SIZES = {"tilepro64": (8, 8), "epiphany16": (4, 4), "epiphany64": (8, 8)}
# Tiles a preset keeps for the OS (framework/topology/topology.cpp), for a run report, which
# does not list them (`topo --json` does: `reserved`).
PRESET_RESERVED = {"tilepro64": [(x, 7) for x in range(1, 7)]}
BENCH_KINDS = ("pingpong", "asym", "stream", "mapvec", "latency", "scaling")


class Refused(Exception):
    """The input is not something plot can draw; the message says why."""


def num(value, default=None):
    """A JSON number as float, or `default` for anything else (absent, null, text)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


# ---------------------------------------------------------------- reading


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise Refused(f"cannot read it: {e.strerror}") from e
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        # Interval stats are one JSON object per line.
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            rows = [json.loads(line) for line in lines]
        except json.JSONDecodeError:
            raise Refused(f"not JSON: {e.msg} at line {e.lineno}, column {e.colno}") from e
        return rows


def kind_of(doc):
    if isinstance(doc, list):
        if doc and all(isinstance(r, dict) and "interval" in r for r in doc):
            return "stats"
        raise Refused("a JSON list that is not --stats-interval lines (objects with 'interval')")
    if not isinstance(doc, dict):
        raise Refused(f"a JSON {type(doc).__name__}, not a tilepipe report (an object)")
    if "interval" in doc and "stages" in doc:
        return "stats"
    if "bench" in doc:
        if doc["bench"] not in BENCH_KINDS:
            raise Refused(f"a bench report of kind '{doc['bench']}', which plot cannot draw "
                          f"(it draws {', '.join(BENCH_KINDS)})")
        if not isinstance(doc.get("rows"), list) or not doc["rows"]:
            raise Refused(f"a '{doc['bench']}' bench report without rows")
        return doc["bench"]
    if "stages" in doc:
        if not isinstance(doc["stages"], list) or not doc["stages"]:
            raise Refused("a run report without stages")
        return "run"
    if "nodes" in doc and "width" in doc and "height" in doc:
        return "topo"
    raise Refused("neither a run report ('stages'), a bench report ('bench' and 'rows'), a topology "
                  "('nodes', 'width', 'height') nor --stats-interval lines ('interval')")


def field(doc, name, default=None):
    """A top-level report field, also where a report keeps it in its `header` object."""
    if name in doc:
        return doc[name]
    header = doc.get("header")
    if isinstance(header, dict) and name in header:
        return header[name]
    return default


def xy(entry):
    tile = entry.get("tile")
    if isinstance(tile, list) and len(tile) == 2 and all(isinstance(v, int) for v in tile):
        return tile[0], tile[1]
    return None


# ---------------------------------------------------------------- the mesh


def mesh_size(doc, cells):
    w, h = field(doc, "width"), field(doc, "height")
    if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0:
        return w, h
    preset = TOPOLOGY_SIZES.get(str(field(doc, "topology", "")))
    xs = [c[0] for c in cells] or [0]
    ys = [c[1] for c in cells] or [0]
    if preset and max(xs) < preset[0] and max(ys) < preset[1]:
        return preset
    return max(xs) + 1, max(ys) + 1


def reserved_tiles(doc):
    listed = field(doc, "reserved")
    if isinstance(listed, list):
        return {(t[0], t[1]) for t in listed if isinstance(t, list) and len(t) == 2}
    return set(PRESET_RESERVED.get(str(field(doc, "topology", "")), []))


def draw_channels(ax, channels, node_tile):
    """Each pair of tiles linked by channels: one arrow along its XY route (x first, then y), labelled
    with the hops and, when several channels share it, their number. A channel within a tile: a loop."""
    routes = {}
    for ch in channels:
        a, b = node_tile.get(ch.get("from")), node_tile.get(ch.get("to"))
        if a is not None and b is not None:
            routes.setdefault((a, b), []).append(ch.get("hops"))
    style = dict(color="#1f4e9a", lw=1.2, alpha=0.85)
    reach = [0.0, 0.0]  # how far up and down the arcs go, in tile rows
    for n, ((a, b), hops) in enumerate(sorted(routes.items())):
        count = f" x{len(hops)}" if len(hops) > 1 else ""
        if a == b:
            ax.annotate("", xy=(a[0] + 0.32, a[1] + 0.2), xytext=(a[0] + 0.32, a[1] - 0.2),
                        arrowprops=dict(arrowstyle="->", connectionstyle="arc3,rad=-1.5", **style))
            continue
        label = f"{hops[0]} hop{'' if hops[0] == 1 else 's'}{count}" if hops[0] is not None else count
        if a[0] == b[0] or a[1] == b[1]:
            # On one row or column: an arc whose depth (0.3 to 1.3 tiles) differs per route, so arcs
            # sharing a row stay apart. arc3's control point sits rad x the span off the middle, square
            # to it; the curve's apex is half way there (y grows downwards here, hence the signs).
            dx, dy = b[0] - a[0], b[1] - a[1]
            span = math.hypot(dx, dy)
            depth = 0.3 + 0.25 * (n % 5)
            rad = 2 * depth / span
            ax.annotate("", xy=b, xytext=a, arrowprops=dict(arrowstyle="->", connectionstyle=f"arc3,rad={rad}",
                                                            shrinkA=8, shrinkB=8, **style))
            mid = ((a[0] + b[0]) / 2 - 0.5 * rad * dy, (a[1] + b[1]) / 2 + 0.5 * rad * dx)
            reach[0] = min(reach[0], mid[1] - 0.2)
            reach[1] = max(reach[1], mid[1] + 0.2)
        else:
            corner = (b[0], a[1])
            ax.plot([a[0], corner[0]], [a[1], corner[1]], **style)
            ax.annotate("", xy=b, xytext=corner, arrowprops=dict(arrowstyle="->", shrinkA=0, shrinkB=8, **style))
            mid = ((a[0] + corner[0]) / 2, a[1])
        if label:
            ax.text(mid[0], mid[1], label, fontsize=6, ha="center", va="center", color="#1f4e9a",
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
    return reach


def fit_name(name, chars):
    """`name` in lines of at most `chars` characters, broken after its `.` and `/` separators
    (`piped.1.` / `pass_4`), a part longer than a line cut with an ellipsis: a name never runs
    into the next tile."""
    if len(name) <= chars:
        return name
    lines, line = [], ""
    for part in re.split(r"(?<=[./])", name):
        if line and len(line) + len(part) > chars:
            lines.append(line)
            line = part
        else:
            line += part
    lines.append(line)
    return "\n".join(l if len(l) <= chars else l[:chars - 1] + "…" for l in lines)


def draw_mesh(ax, doc, tiles, value_of, label, cmap_name, vmax=1.0):
    """Tiles as squares coloured by value_of(names on it); channels along their XY route with hops."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    on_tile = {}
    node_tile = {}
    for t in tiles:
        cell = xy(t)
        if cell is None:
            continue
        name = t.get("node", t.get("name", "?"))
        on_tile.setdefault(cell, []).append(name)
        node_tile[name] = cell
    width, height = mesh_size(doc, list(on_tile))
    cmap = plt.get_cmap(cmap_name)
    reserved = reserved_tiles(doc)
    ax.figure.reserved_marked = 0
    # Characters a tile's line holds: its side in pixels (the axes' share of the figure, laid
    # out square) over a character's width at the labels' size.
    box = ax.get_position()
    side = min(box.width * ax.figure.get_figwidth() / width, box.height * ax.figure.get_figheight() / height) * DPI
    fontsize = 6 if width > 12 else 7
    chars = max(4, int(0.9 * side / (0.62 * fontsize * DPI / 72)))
    for x in range(width):
        for y in range(height):
            names = on_tile.get((x, y))
            if not names and (x, y) in reserved:  # kept for the OS: no node may go there
                ax.add_patch(Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, facecolor="#d9d9d9", edgecolor="#999999",
                                       hatch="////", lw=0.8))
                ax.text(x, y, "reserved", ha="center", va="center", fontsize=6, color="#555555",
                        bbox=dict(boxstyle="round,pad=0.1", fc="#d9d9d9", ec="none"))
                ax.figure.reserved_marked += 1
                continue
            value = value_of(names) if names else None
            face = cmap(min(value / vmax, 1.0)) if value is not None else "#f2f2f2"
            ax.add_patch(Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, facecolor=face, edgecolor="#999999", lw=0.8))
            if names:
                text = "\n".join(fit_name(n, chars) for n in names[:3])
                if len(names) > 3:
                    text += f"\n+{len(names) - 3}"
                if value is not None and label:
                    text += f"\n{label(value)}"
                dark = value is not None and value / vmax > 0.6
                wide = width > 12  # narrow cells: names upright
                ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, rotation=90 if wide else 0,
                        color="white" if dark else "black")
    reach = draw_channels(ax, doc.get("channels") or [], node_tile)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(max(height - 0.4, reach[1]), min(-0.6, reach[0]))  # row 0 at the top, as `tilepipe topo` prints it
    ax.set_aspect("equal")
    ax.set_xticks(range(width))
    ax.set_yticks(range(height))
    ax.tick_params(labelsize=7)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    return cmap


# ---------------------------------------------------------------- run report


def busy(entry):
    """A tile's or stage's busy share: `busy_fraction`, or `busy` in older reports."""
    return num(entry.get("busy_fraction"), num(entry.get("busy")))


def busy_of(tiles):
    by_node = {}
    for t in tiles:
        name = t.get("node", t.get("name"))
        if busy(t) is not None:
            by_node[name] = by_node.get(name, 0.0) + busy(t)
    return lambda names: sum(by_node.get(n, 0.0) for n in names) if any(n in by_node for n in names) else None


def tiles_of(doc):
    tiles = doc.get("tiles")
    if isinstance(tiles, list) and tiles:
        return tiles
    # Older reports: one entry per stage, with its tile.
    return [{"node": s.get("name"), "tile": s.get("tile"), "busy": busy(s)} for s in doc["stages"]]


def latency_buckets(doc):
    lat = doc.get("latency_us")
    if not isinstance(lat, dict):
        return None, {}
    pairs = [(num(b[0]), num(b[1])) for b in lat.get("buckets") or [] if isinstance(b, list) and len(b) == 2]
    pairs = [(u, c) for u, c in pairs if u is not None and c is not None and c > 0]
    return (sorted(pairs) if pairs else None), lat


def branch_edges(doc):
    """The report's edges when the app branches (an output other than `out`), else none."""
    edges = [e for e in doc.get("edges") or [] if isinstance(e, dict) and e.get("from") and e.get("to")]
    return edges if any(e.get("output", "out") != "out" for e in edges) else []


def draw_app_graph(ax, edges, seconds):
    """The app's nodes in columns by their depth from the source, each edge an arrow labelled with its
    output and its rate over the run's window."""
    nodes, succ = [], {}
    for e in edges:
        for n in (e["from"], e["to"]):
            if n not in nodes:
                nodes.append(n)
        succ.setdefault(e["from"], []).append(e["to"])
    depth = {n: 0 for n in nodes}
    for _ in nodes:  # longest path from a node nothing feeds; the graph has no cycle
        for e in edges:
            depth[e["to"]] = max(depth[e["to"]], depth[e["from"]] + 1)
    column = {}
    for n in nodes:
        column.setdefault(depth[n], []).append(n)
    pos = {}
    for d, names in column.items():
        for i, n in enumerate(names):
            pos[n] = (d, -(i - (len(names) - 1) / 2))
    for n, (x, y) in pos.items():
        ax.text(x, y, fit_name(n, 14), ha="center", va="center", fontsize=7,
                bbox=dict(boxstyle="round,pad=0.3", fc="#f4f1de", ec="#555555"))
    for k, e in enumerate(edges):
        a, b = pos[e["from"]], pos[e["to"]]
        ax.annotate("", xy=b, xytext=a, arrowprops=dict(arrowstyle="->", color="#1f4e9a", lw=1.0, shrinkA=14, shrinkB=14,
                                                        connectionstyle=f"arc3,rad={0.08 * (k % 3)}"))
        packets = num(e.get("packets"), 0)
        rate = f"{packets / seconds / 1e6:.2f} Mpps" if seconds else f"{packets:.0f} pkts"
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, f"{e.get('output', '')}\n{rate}", fontsize=6, ha="center",
                va="center", color="#1f4e9a", bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
    ax.set_ylim(min(ys) - 0.8, max(ys) + 0.8)
    ax.axis("off")
    ax.set_title("the app's graph: each edge's output and rate")


def plot_run(doc, plt):
    buckets, lat = latency_buckets(doc)
    fig = plt.figure(figsize=(14, 10), dpi=DPI, layout="constrained")
    tiles = tiles_of(doc)
    width, height = mesh_size(doc, [c for c in map(xy, tiles) if c is not None])
    edges = branch_edges(doc)
    if edges:
        # A branching app: the mesh and its graph across the top, the charts below.
        grid = fig.add_gridspec(2, 2, height_ratios=[1, 1])
        mesh_ax = fig.add_subplot(grid[0, 0])
        draw_app_graph(fig.add_subplot(grid[0, 1]), edges, num(field(doc, "seconds"), 0))
        cyc_cell, cdf_cell = (grid[1, 0], grid[1, 1]) if buckets else (grid[1, :], None)
    elif width > 2 * height:
        # A long mesh (a host's cores in a row): across the top, the charts below it.
        grid = fig.add_gridspec(2, 2, height_ratios=[1, 1.1])
        mesh_ax = fig.add_subplot(grid[0, :])
        cyc_cell, cdf_cell = (grid[1, 0], grid[1, 1]) if buckets else (grid[1, :], None)
    else:
        # A square one (a chip's mesh): on the left, the charts stacked on the right.
        grid = fig.add_gridspec(2, 2, width_ratios=[1.25, 1])
        mesh_ax = fig.add_subplot(grid[:, 0])
        cyc_cell, cdf_cell = (grid[0, 1], grid[1, 1]) if buckets else (grid[:, 1], None)
    cmap = draw_mesh(mesh_ax, doc, tiles, busy_of(tiles), lambda v: f"{v * 100:.0f}%", "YlOrRd")
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 100))
    fig.colorbar(sm, ax=mesh_ax, shrink=0.6, label="busy (% of the run)", location="bottom" if width <= 2 * height else "right")
    rate = num(field(doc, "mpps"))
    title = f"app {field(doc, 'app', '?')} on {field(doc, 'topology', '?')}"
    if rate is not None:
        title += f": {rate:.2f} Mpps"
    mesh_ax.set_title(title + "\ntiles coloured by busy share, channels with their hops")

    cyc_ax = fig.add_subplot(cyc_cell)
    stages = [s for s in doc["stages"] if num(s.get("cycles_per_packet")) is not None]
    names = [s.get("name", "?") for s in stages]
    values = [num(s.get("cycles_per_packet")) for s in stages]
    colours = {"source": "#4c72b0", "processor": "#dd8452", "sink": "#55a868"}
    cyc_ax.barh(range(len(values)), values, color=[colours.get(s.get("kind"), "#8172b3") for s in stages])
    cyc_ax.set_yticks(range(len(values)), names, fontsize=7)
    cyc_ax.invert_yaxis()
    cyc_ax.set_xlabel("cycles per packet")
    cyc_ax.set_title("cycles per packet per stage\n(blue source, orange processor, green sink)")
    for i, v in enumerate(values):
        cyc_ax.text(v, i, f" {v:.0f}", va="center", fontsize=7)

    if buckets:
        cdf_ax = fig.add_subplot(cdf_cell)
        total = sum(c for _, c in buckets)
        xs, ys, seen = [], [], 0.0
        for upper, count in buckets:
            seen += count
            xs.append(upper)
            ys.append(seen / total)
        cdf_ax.step(xs, ys, where="post", color="#4c72b0")
        cdf_ax.set_xscale("log")
        cdf_ax.set_ylim(0, 1.01)
        cdf_ax.set_xlabel("latency (µs, log scale)")
        cdf_ax.set_ylabel("fraction of packets")
        for p in ("p50", "p99", "p999"):
            if num(lat.get(p)) is not None:
                cdf_ax.axvline(num(lat[p]), color="#999999", ls="--", lw=0.8)
                cdf_ax.text(num(lat[p]), 0.02, f" {p} {num(lat[p]):.2f}", rotation=90, fontsize=7, va="bottom")
        samples = lat.get("samples", total)
        cdf_ax.set_title(f"end-to-end latency CDF ({samples} samples)")
        cdf_ax.grid(True, which="both", alpha=0.3)
    return fig


# ---------------------------------------------------------------- other run outputs


def plot_stats(rows, plt):
    fig, (rate_ax, busy_ax) = plt.subplots(2, 1, figsize=(12, 8), dpi=DPI, layout="constrained", sharex=True)
    t = [num(r.get("t"), 0.0) for r in rows]
    rate_ax.plot(t, [num(field(r, "mpps"), 0.0) for r in rows], marker="o", ms=3)
    rate_ax.set_ylabel("Mpps in the interval")
    rate_ax.set_title(f"app {field(rows[0], 'app', '?')}: {len(rows)} intervals")
    rate_ax.grid(True, alpha=0.3)
    names = []
    for r in rows:
        for tile in r.get("tiles") or []:
            if tile.get("node") not in names:
                names.append(tile.get("node"))
    for name in names[:12]:
        series = []
        for r in rows:
            match = [busy(x) for x in r.get("tiles") or [] if x.get("node") == name]
            series.append(match[0] * 100 if match and match[0] is not None else math.nan)
        busy_ax.plot(t, series, label=name)
    busy_ax.set_ylabel("busy (% of the interval)")
    busy_ax.set_xlabel("time since start (s)")
    if names:
        busy_ax.legend(fontsize=7, ncol=3)
    busy_ax.grid(True, alpha=0.3)
    return fig


def plot_topo(doc, plt):
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    nodes = [{"node": n.get("name"), "tile": n.get("tile"), "thread": n.get("thread")} for n in doc["nodes"]]
    thread_of = {n["node"]: num(n["thread"]) for n in nodes}
    threads = max([v for v in thread_of.values() if v is not None] or [0]) + 1
    draw_mesh(ax, doc, nodes, lambda names: thread_of.get(names[0]), lambda v: f"thread {v:.0f}", "Pastel1",
              vmax=max(threads, 9))
    ax.set_title(f"app {doc.get('app', '?')} on {doc.get('topology', '?')} ({doc.get('placement', '?')} placement): "
                 "nodes on tiles, coloured by thread")
    return fig


# ---------------------------------------------------------------- bench reports


def distinct(i):
    """Line i's style: matplotlib's ten colours, then each again with another marker and dash,
    so that no two of a chart's series (stream has a dozen) look alike."""
    lap = i // 10
    return dict(color=f"C{i % 10}", marker="osD^v"[lap % 5], ls=["-", "--", ":", "-."][lap % 4])


def series(rows, key, x, y):
    """{key value: ([x], [y])} sorted by x, rows lacking x or y left out."""
    out = {}
    for r in rows:
        xv, yv = num(x(r)), num(y(r))
        if xv is None or yv is None:
            continue
        xs, ys = out.setdefault(str(key(r)), ([], []))
        xs.append(xv)
        ys.append(yv)
    for k, (xs, ys) in out.items():
        pairs = sorted(zip(xs, ys))
        out[k] = ([p[0] for p in pairs], [p[1] for p in pairs])
    return out


def line_chart(plt, rows, key, x, y, xlabel, ylabel, title, logx=False, logy=False):
    lines = series(rows, key, x, y)
    if not lines:
        raise Refused(f"no rows with both {xlabel} and {ylabel}")
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    for i, (name, (xs, ys)) in enumerate(lines.items()):
        ax.plot(xs, ys, label=name, **distinct(i))
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_pingpong(doc, plt):
    rows = [r for r in doc["rows"] if isinstance(r.get("one_way_ns"), dict) and num(r["one_way_ns"].get("avg"))]
    if not rows:
        raise Refused("a pingpong bench report without one_way_ns.avg in its rows")
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    labels = [str(r.get("transport", "?")) for r in rows]
    avg = [num(r["one_way_ns"]["avg"]) for r in rows]
    lo = [a - num(r["one_way_ns"].get("avg_min"), a) for a, r in zip(avg, rows)]
    hi = [num(r["one_way_ns"].get("avg_max"), a) - a for a, r in zip(avg, rows)]
    ax.bar(range(len(rows)), avg, yerr=[lo, hi], capsize=4, color="#4c72b0")
    ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
    for i, (a, h, r) in enumerate(zip(avg, hi, rows)):
        vs_raw = num(r.get("vs_raw"))
        text = f"{a:.0f}" + (f"\n{vs_raw:.2f}x raw" if vs_raw is not None and "raw" in labels else "")
        ax.text(i, (a + h) * 1.05, text, ha="center", va="bottom", fontsize=8)
    top = max(a + h for a, h in zip(avg, hi))
    if max(avg) > 8 * min(avg):
        ax.set_yscale("log")  # the slow transports would flatten the fast ones
        ax.set_ylim(top=top * 2)
    else:
        ax.set_ylim(top=top * 1.2)
    ax.set_ylabel("one-way latency (ns, median of reps; whiskers min-max)")
    reps = rows[0].get("reps")
    ax.set_title(f"pingpong: one-way latency per transport{f' ({reps} reps)' if reps else ''}")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def plot_asym(doc, plt):
    # The raw and sym rows (one-to-one floors) have no sender count: the curves are the asym rows.
    rows = [r for r in doc["rows"] if r.get("interface", "asym") == "asym"]
    return line_chart(plt, rows, lambda r: r.get("transport"), lambda r: r.get("senders"),
                      lambda r: r.get("one_way_ns"), "senders (1 active, the rest idle)", "one-way latency (ns)",
                      "asym: receive latency against senders")


def plot_stream(doc, plt):
    return line_chart(plt, doc["rows"], lambda r: r.get("transport"), lambda r: r.get("burst"),
                      lambda r: r.get("mmsgs_per_s"), "burst (items)", "Mmsgs/s", "stream: throughput against burst",
                      logx=True)


def plot_scaling(doc, plt):
    x, y = doc.get("x", "workers"), doc.get("y", "value")
    fig = line_chart(plt, doc["rows"], lambda r: r.get("series"), lambda r: r.get(x), lambda r: r.get(y),
                     doc.get("xlabel", x), doc.get("ylabel", y), doc.get("title", "scaling"), logx=True)
    ax = fig.axes[0]
    xs = sorted({num(r.get(x)) for r in doc["rows"] if num(r.get(x)) is not None})
    ax.set_xticks(xs, [f"{v:g}" for v in xs])
    return fig


def plot_mapvec(doc, plt):
    rows = doc["rows"]
    sizes = {(r.get("m"), r.get("dtype")) for r in rows}
    key = (lambda r: r.get("variant")) if len(sizes) <= 1 else (lambda r: f"{r.get('variant')} m={r.get('m')}")
    ts = series(rows, key, lambda r: r.get("workers"), lambda r: r.get("ts_us"))
    if not ts:
        raise Refused("a mapvec bench report without workers and ts_us in its rows")
    fig, (ts_ax, sc_ax) = plt.subplots(1, 2, figsize=(14, 6), dpi=DPI, layout="constrained")
    for i, (name, (xs, ys)) in enumerate(ts.items()):
        ts_ax.plot(xs, ys, label=name, **distinct(i))
    ts_ax.set_xlabel("workers")
    ts_ax.set_ylabel("T_S (µs per task)")
    ts_ax.set_yscale("log")
    ts_ax.set_title("mapvec: service time")
    ts_ax.legend(fontsize=7)
    ts_ax.grid(True, which="both", alpha=0.3)
    scal = series(rows, key, lambda r: r.get("workers"), lambda r: r.get("scalability"))
    top = 1.0
    for i, (name, (xs, ys)) in enumerate(scal.items()):
        sc_ax.plot(xs, ys, label=name, **distinct(i))
        top = max([top] + xs)
    sc_ax.plot([1, top], [1, top], color="#999999", ls="--", lw=0.8, label="ideal")
    sc_ax.set_xlabel("workers")
    sc_ax.set_ylabel("scalability T_S(1) / T_S(W)")
    sc_ax.set_title("mapvec: scalability")
    sc_ax.legend(fontsize=7)
    sc_ax.grid(True, alpha=0.3)
    return fig


def first_num(row, names):
    for n in names:
        if num(row.get(n)) is not None:
            return num(row[n])
    return None


def latency_at(row, p):
    for holder in (row, row.get("latency_us"), row.get("latency")):
        if isinstance(holder, dict):
            for name in (p, p + "_us"):
                if num(holder.get(name)) is not None:
                    return num(holder[name])
    return None


def offered_mpps(row):
    """The load a latency row was measured at, in Mpps: its offered `pps`, an offered Mpps field,
    or for the unpaced top-speed run (`pps` 0) the rate it reached."""
    if num(row.get("pps"), 0.0) > 0:
        return num(row["pps"]) / 1e6
    return first_num(row, ("offered_mpps", "load_mpps", "rate_mpps", "mpps"))


def plot_latency(doc, plt):
    rows = [r for r in doc["rows"] if offered_mpps(r) is not None]
    if not rows:
        raise Refused("a latency bench report whose rows have no load (pps or offered_mpps)")
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    for p, style in (("p50", "-o"), ("p90", "--s"), ("p99", "-^"), ("p999", ":v")):
        xs, ys = [], []
        for r in sorted(rows, key=offered_mpps):
            if latency_at(r, p) is not None:
                xs.append(offered_mpps(r))
                ys.append(latency_at(r, p))
        if xs:
            ax.plot(xs, ys, style, label=p)
    ax.set_yscale("log")
    ax.set_xlabel("offered load (Mpps; the unpaced run at the rate it reached)")
    ax.set_ylabel("end-to-end latency (µs, log scale)")
    app = doc.get("app") or rows[0].get("app")
    ax.set_title("latency against load" + (f": {app}" if app else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


PLOTTERS = {"run": plot_run, "stats": plot_stats, "topo": plot_topo, "pingpong": plot_pingpong, "scaling": plot_scaling,
            "asym": plot_asym, "stream": plot_stream, "mapvec": plot_mapvec, "latency": plot_latency}


def main(argv):
    parser = argparse.ArgumentParser(prog="tilepipe plot", description=__doc__.split("\n")[0])
    parser.add_argument("report", help="a JSON file tilepipe wrote")
    parser.add_argument("-o", "--output", help="the PNG to write (default: REPORT with its extension replaced by .png)")
    args = parser.parse_args(argv)
    # r.json -> r.png, stats.jsonl -> stats.png: the extension, whatever it is, becomes .png.
    out = args.output or os.path.splitext(args.report)[0] + ".png"
    try:
        doc = load(args.report)
        kind = kind_of(doc)
        if kind == "stats" and isinstance(doc, dict):
            doc = [doc]  # a run shorter than one interval writes a single line
        try:
            import matplotlib
        except ImportError:
            print("tilepipe plot: matplotlib is not installed: apt-get install python3-matplotlib "
                  "(scripts/bootstrap.sh does)", file=sys.stderr)
            return 1
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = PLOTTERS[kind](doc, plt)
    except Refused as e:
        print(f"tilepipe plot: {args.report}: {e}", file=sys.stderr)
        return 2
    try:
        fig.savefig(out, dpi=DPI)
    except OSError as e:
        print(f"tilepipe plot: {out}: cannot write: {e.strerror}", file=sys.stderr)
        return 1
    marked = getattr(fig, "reserved_marked", 0)
    print(f"{out}: {kind} ({fig.get_figwidth() * DPI:.0f} x {fig.get_figheight() * DPI:.0f} px"
          + (f", {marked} reserved tiles marked" if marked else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
