"""tilepipe plot's input: reads the JSON it is given and checks that it has the shape the picture of
its kind reads (scripts/plot.py draws it), and checks the name of the PNG to write.

Whatever a file holds, plot either draws it or refuses it with one line naming the file and the
field (`tiles[2].node: null, not a string`), exit status 2: never a traceback, a hang or a picture
of something else. So, before drawing:
  - the file is a regular file of UTF-8 JSON (or JSON lines), numbers finite and within 64 bits,
    nested no deeper than Python can read;
  - each field the picture reads is of its type where it is present (a field may be absent: older
    or newer reports are drawn around what they lack; a number may be null, which is what
    tilepipe writes for one it could not measure; a name, list or object may not);
  - tiles are on the mesh: x and y 0 to 8191 (`host` places a tile per CPU or more in one row), within the
    report's width and height when it gives them, and a mesh of at most 8192 tiles;
  - lists hold at most 8192 entries (a farm of 1024 workers has 2050 channels), latency buckets 8192 (a
    histogram has 7424), --stats-interval lines 1000000: the largest is drawn in about 30 s.
"""

import json
import math
import os
import stat

MAX_MESH_TILES = 8192  # drawn in about 7 s on a 2-CPU VM; a host of 512 CPUs in 8 NUMA nodes is 8192
MAX_TILE = MAX_MESH_TILES - 1  # `host` is one row as wide as the app's tiles (1027 for a farm of 1024)
MAX_ENTRIES = 8192  # a farm of 1024 workers (the most a farm takes) has 1027 tiles and 2050 channels
MAX_BUCKETS = 8192  # framework/metrics/latency_histogram.hpp: kBuckets, 7424
MAX_LINES = 1000000
MAX_BYTES = 1 << 30
BENCH_KINDS = ("pingpong", "asym", "stream", "mapvec", "latency", "scaling")
IMAGE_EXTENSIONS = (".png",)


class Refused(Exception):
    """The input is not something plot can draw; the message says why."""


# ---------------------------------------------------------------- reading


def _number(text):
    value = float(text)
    if not math.isfinite(value):
        raise Refused(f"not JSON tilepipe writes: the number {text[:20]} is beyond a double's range")
    return value


def _integer(text):
    if len(text.lstrip("-")) > 20 or abs(int(text)) >= 1 << 64:
        raise Refused(f"not JSON tilepipe writes: the integer {text[:20]}{'...' if len(text) > 20 else ''} is beyond 64 bits")
    return int(text)


def _constant(name):
    raise Refused(f"not JSON: {name} is not a JSON number (tilepipe writes null for a value it could not measure)")


def _parse(text):
    return json.loads(text, parse_float=_number, parse_int=_integer, parse_constant=_constant)


def load(path):
    """The file's JSON: an object or list, or for JSON lines (--stats-interval) the list of their values."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise Refused("a directory, not a JSON file")
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file (plot reads a JSON file tilepipe wrote)")
        if st.st_size > MAX_BYTES:
            raise Refused(f"{st.st_size} bytes, more than a report plot draws holds ({MAX_BYTES >> 20} MiB at most)")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Refused(f"cannot read it: {e.strerror}") from e
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise Refused(f"not JSON: a binary file (byte 0x{data[e.start]:02x} at offset {e.start} is not UTF-8 text)") from e
    if not text.strip():
        raise Refused("an empty file, not JSON")
    try:
        try:
            return _parse(text)
        except json.JSONDecodeError as e:
            # Interval stats are one JSON object per line.
            try:
                return [_parse(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError:
                raise Refused(f"not JSON: {e.msg} at line {e.lineno}, column {e.colno}") from e
    except RecursionError as e:
        raise Refused("not JSON tilepipe writes: lists or objects nested too deep to read") from e
    except ValueError as e:  # Python's own limits on a number's digits
        raise Refused(f"not JSON tilepipe writes: {str(e).splitlines()[0]}") from e


def kind_of(doc):
    if isinstance(doc, list):
        if doc and all(isinstance(r, dict) and "interval" in r for r in doc):
            return "stats"
        raise Refused("a JSON list that is not --stats-interval lines (objects with 'interval')")
    if not isinstance(doc, dict):
        raise Refused(f"a JSON {_what(doc).split()[-1]}, not a tilepipe report (an object)")
    if "interval" in doc and "stages" in doc:
        return "stats"
    if "bench" in doc:
        if doc["bench"] not in BENCH_KINDS:
            raise Refused(f"a bench report of kind {_quoted(doc['bench'])}, which plot cannot draw "
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


def output_refusal(out, report):
    """Why `out` cannot be the picture's file (None when it can): checked before anything is read."""
    if out.endswith("/") or os.path.isdir(out):
        return f"a directory: -o names the PNG file to write (e.g. {os.path.join(out, 'plot.png')})"
    if os.path.splitext(out)[1].lower() not in IMAGE_EXTENSIONS:
        return f"not a {' or '.join(IMAGE_EXTENSIONS)} file name: plot writes PNG, -o names it (e.g. -o plot.png)"
    if os.path.exists(out) and os.path.exists(report) and os.path.samefile(out, report):
        return "the report itself: plot would draw over it (give -o NAME.png)"
    return None


# ---------------------------------------------------------------- fields (what the pictures read, checked below)


def num(value, default=None):
    """A JSON number as float, or `default` for anything else (absent, null, text)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


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


def busy(entry):
    """A tile's or stage's busy share: `busy_fraction`, or `busy` in older reports."""
    return num(entry.get("busy_fraction"), num(entry.get("busy")))


def tiles_of(doc):
    tiles = doc.get("tiles")
    if isinstance(tiles, list) and tiles:
        return tiles
    # Older reports: one entry per stage, with its tile.
    return [{"node": s.get("name", "?"), "tile": s.get("tile"), "busy": busy(s)} for s in doc["stages"]]


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


# ---------------------------------------------------------------- shapes


def _what(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _quoted(value, most=40):
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= most else text[:most - 1] + "…"


def _place(where):
    """`tiles[2].node`, or for a JSON line's own shape `line 4`."""
    return where.rstrip(": ") or "the report"


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def text(value, where):
    if not isinstance(value, str):
        raise Refused(f"{_place(where)}: {_what(value)}, not a string")


def number(value, where):
    if value is not None and not _is_number(value):
        raise Refused(f"{_place(where)}: {_what(value)}, not a number")


def label(value, where):
    """A name or a number a picture prints (a transport, a series)."""
    if value is None or isinstance(value, (list, dict)):
        raise Refused(f"{_place(where)}: {_what(value)}, not a name or a number")


def mesh_side(value, where):
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_TILE + 1:
        raise Refused(f"{_place(where)}: {_quoted(value)}, not a mesh side (a whole number, 1 to {MAX_TILE + 1})")


def tile(value, where):
    if not (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise Refused(f"{_place(where)}: {_quoted(value)}, not a tile [x, y]")
    if not all(0 <= v <= MAX_TILE for v in value):
        raise Refused(f"{_place(where)}: {_quoted(value)} is off any mesh (x and y are 0 to {MAX_TILE})")


def pair(value, where):
    """A latency bucket: [upper bound, count]."""
    if not (isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)):
        raise Refused(f"{_place(where)}: {_quoted(value)}, not a pair of numbers [upper, count]")


def list_of(entry, at_least=0, most=MAX_ENTRIES):
    def check(value, where):
        if not isinstance(value, list):
            raise Refused(f"{_place(where)}: {_what(value)}, not a list")
        if len(value) < at_least:
            raise Refused(f"{_place(where)}: an empty list")
        if len(value) > most:
            raise Refused(f"{_place(where)}: {len(value)} entries, more than plot draws ({most})")
        for i, v in enumerate(value):
            entry(v, f"{where}[{i}]")
    return check


def obj(fields):
    """An object whose fields named in `fields` are each of their shape where present."""
    def check(value, where):
        if not isinstance(value, dict):
            raise Refused(f"{_place(where)}: {_what(value)}, not an object")
        for name, shape in fields.items():
            if name in value:
                shape(value[name], f"{where}.{name}" if where and not where.endswith(" ") else where + name)
    return check


# What each picture reads (plot.py), field by field.
HEADER = {"app": label, "topology": label, "width": mesh_side, "height": mesh_side, "reserved": list_of(tile),
          "mpps": number, "seconds": number}
CHANNEL = obj({"from": text, "to": text, "hops": number})
RUN = obj({**HEADER, "header": obj(HEADER),
           "stages": list_of(obj({"name": text, "kind": text, "tile": tile, "cycles_per_packet": number,
                                  "busy_fraction": number, "busy": number}), at_least=1),
           "tiles": list_of(obj({"node": text, "name": text, "tile": tile, "busy_fraction": number, "busy": number})),
           "channels": list_of(CHANNEL),
           "edges": list_of(obj({"from": text, "to": text, "output": text, "packets": number})),
           "latency_us": obj({"buckets": list_of(pair, most=MAX_BUCKETS), "p50": number, "p99": number, "p999": number,
                              "samples": number})})
STATS_LINE = obj({"t": number, "mpps": number, "app": label, "header": obj(HEADER),
                     "tiles": list_of(obj({"node": text, "busy_fraction": number, "busy": number}))})
TOPO = obj({**HEADER, "placement": label, "channels": list_of(CHANNEL),
            "nodes": list_of(obj({"name": text, "tile": tile, "thread": number}))})
LATENCY = obj({p: number for p in ("p50", "p90", "p99", "p999", "p50_us", "p90_us", "p99_us", "p999_us")})
BENCH_ROW = {
    "pingpong": {"transport": label, "reps": label, "vs_raw": number,
                 "one_way_ns": obj({"avg": number, "avg_min": number, "avg_max": number})},
    "asym": {"transport": label, "interface": label, "senders": number, "one_way_ns": number},
    "stream": {"transport": label, "burst": number, "mmsgs_per_s": number},
    "mapvec": {"variant": label, "m": label, "dtype": label, "workers": number, "ts_us": number, "scalability": number},
    "latency": {"app": label, "pps": number, "offered_mpps": number, "load_mpps": number, "rate_mpps": number,
                "mpps": number, "latency_us": LATENCY, "latency": LATENCY,
                **{p: number for p in ("p50", "p90", "p99", "p999", "p50_us", "p90_us", "p99_us", "p999_us")}},
    "scaling": {"series": label},
}


def check(kind, doc):
    """Refuses `doc` naming its first field that is not of the shape its picture reads."""
    if kind == "run":
        RUN(doc, "")
    elif kind == "stats":
        if len(doc) > MAX_LINES:
            raise Refused(f"{len(doc)} lines, more than plot draws ({MAX_LINES})")
        for i, line in enumerate(doc):
            STATS_LINE(line, f"line {i + 1}: ")  # line 4: tiles[0].node
    elif kind == "topo":
        TOPO(doc, "")
    else:
        fields = dict(BENCH_ROW[kind])
        top = {"app": label}
        if kind == "scaling":
            top = {n: text for n in ("x", "y", "xlabel", "ylabel", "title")}
            for n in ("x", "y"):
                if isinstance(doc.get(n), str):
                    fields[doc[n]] = number
        obj(top)(doc, "")
        list_of(obj(fields))(doc["rows"], "rows")
    if kind in ("run", "topo"):
        _check_mesh(doc, "tiles" if kind == "run" else "nodes")


def _check_mesh(doc, entries):
    """Every tile within the report's width and height (when it gives them), and a mesh plot can draw."""
    header = doc.get("header") if isinstance(doc.get("header"), dict) else {}
    width, height = doc.get("width", header.get("width")), doc.get("height", header.get("height"))
    sized = width is not None and height is not None
    if sized and width * height > MAX_MESH_TILES:
        raise Refused(f"width and height: a {width} x {height} mesh, more tiles than plot draws ({MAX_MESH_TILES})")
    spots = [(f"{entries}[{i}].tile", e.get("tile")) for i, e in enumerate(doc.get(entries) or [])]
    spots += [(f"stages[{i}].tile", e.get("tile")) for i, e in enumerate(doc.get("stages") or []) if entries == "tiles"]
    spots += [(f"reserved[{i}]", t) for i, t in enumerate(field_list(doc, "reserved"))]
    spots = [(where, t) for where, t in spots if t is not None]
    if sized:
        for where, (x, y) in spots:
            if x >= width or y >= height:
                raise Refused(f"{_place(where)}: [{x}, {y}] is off the report's {width} x {height} mesh")
    elif spots:
        far_x, far_y = max(spots, key=lambda s: s[1][0]), max(spots, key=lambda s: s[1][1])
        w, h = far_x[1][0] + 1, far_y[1][1] + 1
        if w * h > MAX_MESH_TILES:
            where = far_x[0] if far_x[0] == far_y[0] else f"{far_x[0]} and {far_y[0]}"
            raise Refused(f"{_place(where)}: tiles up to x {w - 1} and y {h - 1} make a {w} x {h} mesh, more tiles than "
                          f"plot draws ({MAX_MESH_TILES})")


def field_list(doc, name):
    value = doc.get(name)
    if value is None and isinstance(doc.get("header"), dict):
        value = doc["header"].get(name)
    return value or []
