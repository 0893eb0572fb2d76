#!/usr/bin/env python3
"""Runs one libFuzzer target for a while on its corpus, seeded from the shipped configs and
rule files, the shared captures and the hand-made seeds in tests/fuzz/seeds.

usage: run_fuzzer.py TARGET_EXE NAME WORKDIR [SECONDS]

Run from the source root (the targets read conf/ there). SECONDS defaults to
$TILEPIPE_FUZZ_SECONDS, else 30. The corpus grows in WORKDIR/NAME/corpus and is kept between
runs; a crashing input is written to WORKDIR/NAME/ (crash-..., leak-..., timeout-...) and the
exit status is libFuzzer's: 0 when the target ran clean for the whole time.
"""
import glob
import hashlib
import os
import shutil
import struct
import subprocess
import sys

SEEDS = "tests/fuzz/seeds"


def pcaps_dir():
    return os.environ.get("TILEPIPE_PCAPS", os.path.join("..", "shared", "pcaps"))


def ethernet_frames(path, limit=64):
    """Up to `limit` frames of an Ethernet (link type 1) pcap or pcapng file; [] otherwise."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    frames = []
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        if len(data) < 24 or struct.unpack(e + "I", data[20:24])[0] & 0xFFFF != 1:
            return []
        at = 24
        while at + 16 <= len(data) and len(frames) < limit:
            incl = struct.unpack(e + "I", data[at + 8:at + 12])[0]
            frames.append(data[at + 16:at + 16 + incl])
            at += 16 + incl
    elif magic == b"\x0a\x0d\x0d\x0a" and len(data) >= 12:
        e = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
        links, at = [], 0
        while at + 12 <= len(data) and len(frames) < limit:
            kind, size = struct.unpack(e + "II", data[at:at + 8])
            if size < 12 or at + size > len(data):
                break
            body = data[at + 8:at + size - 4]
            if kind == 0x0A0D0D0A:
                links = []
            elif kind == 1 and len(body) >= 2:
                links.append(struct.unpack(e + "H", body[:2])[0])
            elif kind == 6 and len(body) >= 20:
                iface, _, _, incl = struct.unpack(e + "IIII", body[:16])
                if iface < len(links) and links[iface] == 1:
                    frames.append(body[20:20 + incl])
            elif kind == 3 and len(body) >= 4 and links and links[0] == 1:
                frames.append(body[4:])
            at += size
    return [f for f in frames if f]


def seed_files(name):
    """The files seeding `name` (besides the directories of seed_dirs)."""
    files = glob.glob(os.path.join(SEEDS, name, "*"))
    if name == "config":
        files += glob.glob("conf/*.yaml") + glob.glob("conf/bench/*.yaml")
    rule_files = {"acl_rules": "firewall.rules", "lpm_routes": "routes.txt", "rewrite_rules": "nat.rules",
                  "payload_patterns": "ids.patterns"}
    if name in rule_files:
        files.append(os.path.join("conf", "data", rule_files[name]))
    return files


def seed_dirs(name):
    """Directories read as seeds as they are (the captures)."""
    return [pcaps_dir()] if name == "capture" and os.path.isdir(pcaps_dir()) else []


def prepare_seeds(name, into):
    """Fills `into` with this target's seeds (files libFuzzer reads but never changes)."""
    shutil.rmtree(into, ignore_errors=True)
    os.makedirs(into)
    for f in seed_files(name):
        shutil.copy(f, os.path.join(into, os.path.basename(f)))
    if name == "parse":
        for capture in sorted(glob.glob(os.path.join(pcaps_dir(), "*"))):
            for frame in ethernet_frames(capture):
                digest = hashlib.sha1(frame).hexdigest()[:16]
                with open(os.path.join(into, digest), "wb") as out:
                    out.write(frame)


# Longest input libFuzzer makes: a capture prefix holds a few dozen records, a frame a jumbo.
MAX_LEN = {"capture": 65536, "parse": 9216, "config": 8192}


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    exe, name, workdir = argv[1], argv[2], argv[3]
    seconds = int(argv[4] if len(argv) == 5 else os.environ.get("TILEPIPE_FUZZ_SECONDS", "30"))
    base = os.path.join(workdir, name)
    corpus, seeds = os.path.join(base, "corpus"), os.path.join(base, "seeds")
    os.makedirs(corpus, exist_ok=True)
    prepare_seeds(name, seeds)
    cmd = [exe, f"-max_total_time={seconds}", f"-max_len={MAX_LEN.get(name, 4096)}", "-timeout=25",
           "-rss_limit_mb=4096", "-print_final_stats=1", f"-artifact_prefix={base}/", corpus, seeds]
    cmd += seed_dirs(name)
    print(" ".join(cmd), flush=True)
    # Leaks are findings too; DPDK's memory is its own (not malloc), so EAL adds no false ones.
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
