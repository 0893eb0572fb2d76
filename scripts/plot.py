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
kind, one missing what its kind needs, or one whose fields are not of the shape its picture reads
(plot_input.py checks them all before drawing) is refused in one line naming the file and the field:
exit status 2, as is an -o that is not a .png file name. Names too long for their place are cut
with an ellipsis. Matplotlib missing, or the PNG not written: exit status 1.
"""

import argparse
import math
import os
import re
import sys
import warnings

try:  # reading and checking the input, beside this file (next to the binary as tilepipe-plot.py, installed, in scripts/)
    from plot_input import (Refused, branch_edges, busy, check, field, kind_of, latency_at, latency_buckets, load, num,
                            offered_mpps, output_refusal, tiles_of, xy)
except ImportError as e:
    sys.exit(f"tilepipe plot: {e}: plot_input.py belongs beside {os.path.realpath(__file__)}")

DPI = 100
TOPOLOGY_SIZES = {"tilepro64": (8, 8), "epiphany16": (4, 4), "epiphany64": (8, 8)}
# Tiles a preset keeps for the OS (framework/topology/topology.cpp), for a run report, which
# does not list them (`topo --json` does: `reserved`).
PRESET_RESERVED = {"tilepro64": [(x, 7) for x in range(1, 7)]}


def short(value, most=48):
    """A name from the file as a label: cut with an ellipsis past `most` characters, its `$` a
    dollar sign rather than the start of TeX."""
    text = str(value)
    return (text if len(text) <= most else text[:most - 1] + "…").replace("$", r"\$")


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
            ax.text(mid[0], mid[1], short(label, 24), fontsize=6, ha="center", va="center", color="#1f4e9a",
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.85))
    return reach


def fit_name(name, chars, most_lines=3):
    """`name` in lines of at most `chars` characters, broken after its `.` and `/` separators
    (`piped.1.` / `pass_4`), a part longer than a line cut with an ellipsis, and at most
    `most_lines` lines, the last ending with an ellipsis when there was more: a name never runs
    into the next tile."""
    name = str(name)
    if len(name) <= chars:
        return name.replace("$", r"\$")
    lines, line = [], ""
    for part in re.split(r"(?<=[./])", name):
        if line and len(line) + len(part) > chars:
            lines.append(line)
            line = part
        else:
            line += part
    lines.append(line)
    lines = [l if len(l) <= chars else l[:chars - 1] + "…" for l in lines]
    if len(lines) > most_lines:
        lines = lines[:most_lines]
        lines[-1] = lines[-1][:chars - 1].rstrip("…") + "…"
    return "\n".join(lines).replace("$", r"\$")


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


def busy_of(tiles):
    by_node = {}
    for t in tiles:
        name = t.get("node", t.get("name"))
        if busy(t) is not None:
            by_node[name] = by_node.get(name, 0.0) + busy(t)
    return lambda names: sum(by_node.get(n, 0.0) for n in names) if any(n in by_node for n in names) else None


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
    for _ in nodes:  # longest path from a node nothing feeds (a cycle stops at len(nodes) rounds)
        deeper = False
        for e in edges:
            if depth[e["from"]] + 1 > depth[e["to"]]:
                depth[e["to"]], deeper = depth[e["from"]] + 1, True
        if not deeper:
            break
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
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, f"{short(e.get('output', ''), 20)}\n{rate}", fontsize=6, ha="center",
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
    title = f"app {short(field(doc, 'app', '?'))} on {short(field(doc, 'topology', '?'))}"
    if rate is not None:
        title += f": {rate:.2f} Mpps"
    mesh_ax.set_title(title + "\ntiles coloured by busy share, channels with their hops")

    cyc_ax = fig.add_subplot(cyc_cell)
    stages = [s for s in doc["stages"] if num(s.get("cycles_per_packet")) is not None]
    names = [short(s.get("name", "?"), 40) for s in stages]
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
    rate_ax.set_title(f"app {short(field(rows[0], 'app', '?'))}: {len(rows)} intervals")
    rate_ax.grid(True, alpha=0.3)
    shares = []  # per interval: each node's busy share (its first entry's)
    for r in rows:
        share = {}
        for tile in r.get("tiles") or []:
            share.setdefault(tile.get("node"), busy(tile))
        shares.append(share)
    names = list(dict.fromkeys(name for share in shares for name in share))
    for name in names[:12]:
        series = [share[name] * 100 if share.get(name) is not None else math.nan for share in shares]
        busy_ax.plot(t, series, label=short(name, 40))
    busy_ax.set_ylabel("busy (% of the interval)")
    busy_ax.set_xlabel("time since start (s)")
    if names:
        busy_ax.legend(fontsize=7, ncol=3)
    busy_ax.grid(True, alpha=0.3)
    return fig


def plot_topo(doc, plt):
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    nodes = [{"node": n.get("name", "?"), "tile": n.get("tile"), "thread": n.get("thread")} for n in doc["nodes"]]
    thread_of = {n["node"]: num(n["thread"]) for n in nodes}
    threads = max([v for v in thread_of.values() if v is not None] or [0]) + 1
    draw_mesh(ax, doc, nodes, lambda names: thread_of.get(names[0]), lambda v: f"thread {v:.0f}", "Pastel1",
              vmax=max(threads, 9))
    ax.set_title(f"app {short(doc.get('app', '?'))} on {short(doc.get('topology', '?'))} "
                 f"({short(doc.get('placement', '?'))} placement): "
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
        raise Refused(f"no rows with both {str(xlabel)[:48]} and {str(ylabel)[:48]}")
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    for i, (name, (xs, ys)) in enumerate(lines.items()):
        ax.plot(xs, ys, label=short(name, 40), **distinct(i))
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(short(xlabel, 100))
    ax.set_ylabel(short(ylabel, 100))
    ax.set_title(short(title, 120))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_pingpong(doc, plt):
    rows = [r for r in doc["rows"] if isinstance(r.get("one_way_ns"), dict) and num(r["one_way_ns"].get("avg"))]
    if not rows:
        raise Refused("a pingpong bench report without one_way_ns.avg in its rows")
    fig, ax = plt.subplots(figsize=(10, 6), dpi=DPI, layout="constrained")
    labels = [short(r.get("transport", "?"), 24) for r in rows]
    avg = [num(r["one_way_ns"]["avg"]) for r in rows]
    lo = [max(0.0, a - num(r["one_way_ns"].get("avg_min"), a)) for a, r in zip(avg, rows)]
    hi = [max(0.0, num(r["one_way_ns"].get("avg_max"), a) - a) for a, r in zip(avg, rows)]
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
        ts_ax.plot(xs, ys, label=short(name, 40), **distinct(i))
    ts_ax.set_xlabel("workers")
    ts_ax.set_ylabel("T_S (µs per task)")
    ts_ax.set_yscale("log")
    ts_ax.set_title("mapvec: service time")
    ts_ax.legend(fontsize=7)
    ts_ax.grid(True, which="both", alpha=0.3)
    scal = series(rows, key, lambda r: r.get("workers"), lambda r: r.get("scalability"))
    top = 1.0
    for i, (name, (xs, ys)) in enumerate(scal.items()):
        sc_ax.plot(xs, ys, label=short(name, 40), **distinct(i))
        top = max([top] + xs)
    sc_ax.plot([1, top], [1, top], color="#999999", ls="--", lw=0.8, label="ideal")
    sc_ax.set_xlabel("workers")
    sc_ax.set_ylabel("scalability T_S(1) / T_S(W)")
    sc_ax.set_title("mapvec: scalability")
    sc_ax.legend(fontsize=7)
    sc_ax.grid(True, alpha=0.3)
    return fig


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
    ax.set_title("latency against load" + (f": {short(app)}" if app else ""))
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
    refusal = output_refusal(out, args.report)
    if refusal:  # before any work: -o names a .png file
        print(f"tilepipe plot: {out}: {refusal}", file=sys.stderr)
        return 2
    existed = os.path.exists(out)
    try:
        doc = load(args.report)
        kind = kind_of(doc)
        if kind == "stats" and isinstance(doc, dict):
            doc = [doc]  # a run shorter than one interval writes a single line
        check(kind, doc)
        try:
            import matplotlib
        except ImportError:
            print("tilepipe plot: matplotlib is not installed: apt-get install python3-matplotlib "
                  "(scripts/bootstrap.sh does)", file=sys.stderr)
            return 1
        matplotlib.use("Agg")
        warnings.simplefilter("ignore")  # numpy's overflow in a huge value: the picture shows what the file says
        import matplotlib.pyplot as plt
        fig = PLOTTERS[kind](doc, plt)
        fig.savefig(out, dpi=DPI, format="png")
        failed = None
    except Refused as e:
        failed = (2, f"{args.report}: {e}")
    except OSError as e:
        failed = (1, f"{out}: cannot write: {e.strerror}")
    except Exception as e:  # pylint: disable=broad-except
        # What the checks let through and matplotlib could not draw: one line, never a traceback.
        failed = (1, f"{args.report}: cannot draw it ({type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]})")
    if failed:
        if not existed and os.path.isfile(out):
            os.remove(out)  # a PNG cut short
        print(f"tilepipe plot: {failed[1]}", file=sys.stderr)
        return failed[0]
    marked = getattr(fig, "reserved_marked", 0)
    print(f"{out}: {kind} ({fig.get_figwidth() * DPI:.0f} x {fig.get_figheight() * DPI:.0f} px"
          + (f", {marked} reserved tiles marked" if marked else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
