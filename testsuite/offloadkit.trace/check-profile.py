#!/usr/bin/env python3
"""Check an OFFLOADKIT_PROFILE file for trace.exp.

Usage: check-profile.py MODE FILE

Every mode checks that FILE is one valid JSON object in Chrome's trace
format as offloadkit writes it: complete ("X") events with non-negative
numeric times, a track (tid) per device named by a "thread_name" metadata
event, and the arguments of each category.  MODE adds what the program
that wrote it must have produced: two-regions, nowait, odd-names,
fatal-exit.  Prints "OK", or one "ERROR: ..." line per problem and exits
with 1.
"""

import json
import re
import sys

errors = []


def error(msg):
    errors.append(msg)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_structure(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        error("not an object with a traceEvents list")
        return [], {}
    xs, names, procs = [], {}, 0
    for i, e in enumerate(doc["traceEvents"]):
        where = "event %d" % i
        if not isinstance(e, dict):
            error("%s is not an object" % where)
            continue
        for key, test in (("pid", is_int), ("tid", is_int),
                          ("name", lambda v: isinstance(v, str))):
            if not test(e.get(key)):
                error("%s: bad or missing %s" % (where, key))
        ph = e.get("ph")
        args = e.get("args")
        if not isinstance(args, dict):
            error("%s: no args object" % where)
            continue
        if ph == "M":
            if e.get("name") == "process_name":
                procs += 1
            elif e.get("name") == "thread_name":
                names[e.get("tid")] = args.get("name")
            continue
        if ph != "X":
            error("%s: phase %r" % (where, ph))
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not is_num(ts) or ts < 0 or not is_num(dur) or dur < 0:
            error("%s: bad times ts=%r dur=%r" % (where, ts, dur))
            continue
        if not isinstance(args.get("backend"), str):
            error("%s: no backend" % where)
        cat = e.get("cat")
        if cat == "transfer":
            if e.get("name") not in ("host->device", "device->host",
                                     "device->device"):
                error("%s: transfer named %r" % (where, e.get("name")))
            if not is_int(args.get("bytes")) or args["bytes"] < 0:
                error("%s: bad bytes" % where)
        elif cat == "launch":
            for key in ("grid", "block"):
                v = args.get(key)
                if (not isinstance(v, list) or len(v) != 3
                        or not all(is_int(n) and n > 0 for n in v)):
                    error("%s: bad %s %r" % (where, key, v))
            if not isinstance(args.get("async"), bool):
                error("%s: bad async" % where)
        elif cat == "image":
            if (not is_int(args.get("functions"))
                    or not is_int(args.get("variables"))
                    or not isinstance(args.get("what"), str)):
                error("%s: bad image arguments" % where)
        else:
            error("%s: category %r" % (where, cat))
        xs.append(e)
    if procs != 1:
        error("%d process_name events" % procs)
    for e in xs:
        name = names.get(e["tid"])
        want = "device %d (%s)" % (e["tid"], e["args"].get("backend"))
        if name != want:
            error("track %d is named %r, expected %r" % (e["tid"], name, want))
    return xs, names


def end(e):
    return e["ts"] + e["dur"]


# ts and dur are rounded to 1 ns each.
SLACK = 0.002


def check_in_order(seq):
    """Events of SEQ ran one after the other."""
    for a, b in zip(seq, seq[1:]):
        if end(a) > b["ts"] + SLACK:
            error("%s (ends %.3f) overlaps the later %s (starts %.3f)"
                  % (a["name"], end(a), b["name"], b["ts"]))


def transfers(xs, name, nbytes):
    return [e for e in xs if e["cat"] == "transfer" and e["name"] == name
            and e["args"]["bytes"] == nbytes]


def one(lst, what):
    if len(lst) != 1:
        error("%d %s events, expected 1" % (len(lst), what))
        return None
    return lst[0]


def launches(xs):
    return [e for e in xs if e["cat"] == "launch"]


def check_two_regions(xs):
    img = one([e for e in xs if e["cat"] == "image"], "image")
    if img is not None and img["args"]["functions"] != 2:
        error("image has %r functions" % img["args"]["functions"])
    MB = 1024 * 1024
    a_in = one(transfers(xs, "host->device", MB), "host->device 1 MiB")
    a_out = one(transfers(xs, "device->host", MB), "device->host 1 MiB")
    b_in = one(transfers(xs, "host->device", MB // 2), "host->device 512 KiB")
    if transfers(xs, "device->host", MB // 2):
        error("map(to:) data was copied back")
    ls = launches(xs)
    if len(ls) != 2:
        error("%d launches, expected 2" % len(ls))
        return
    ls.sort(key=lambda e: e["ts"])
    for e in ls:
        if not re.fullmatch(r"main\$_omp_fn\$[0-9]+", e["name"]):
            error("launch named %r" % e["name"])
        if e["args"]["async"]:
            error("launch %s is async" % e["name"])
    if ls[0]["name"] == ls[1]["name"]:
        error("both launches are named %r" % ls[0]["name"])
    if ls[0]["args"]["grid"] != [1, 1, 1] or ls[1]["args"]["grid"] != [2, 1, 1]:
        error("grids %r, %r; expected [1,1,1], [2,1,1]"
              % (ls[0]["args"]["grid"], ls[1]["args"]["grid"]))
    if None not in (img, a_in, a_out, b_in):
        check_in_order([img, a_in, ls[0], a_out, b_in, ls[1]])
    # The program is sequential: events reach the file in the order they
    # end.
    for a, b in zip(xs, xs[1:]):
        if end(b) + SLACK < end(a):
            error("%s ends before the %s written before it" % (b["name"], a["name"]))


def check_nowait(xs):
    ls = launches(xs)
    if len(ls) != 1 or ls[0]["args"]["async"] is not True:
        error("expected one async launch, found %r"
              % [(e["name"], e["args"]["async"]) for e in ls])


ODD = ('odd "quoted" \\back\\slashed\\ \ttab\nnewline\x01 caf\u00e9 '
       '\u00ff end')


def check_odd_names(xs):
    ls = launches(xs)
    if [e["name"] for e in ls] != [ODD]:
        error("launch names %r, expected [%r]" % ([e["name"] for e in ls], ODD))


def check_fatal_exit(xs):
    if len(launches(xs)) != 1:
        error("%d launches, expected 1" % len(launches(xs)))
    one(transfers(xs, "device->host", 4000), "device->host 4000 bytes")


def main():
    if len(sys.argv) != 3:
        print("usage: check-profile.py MODE FILE", file=sys.stderr)
        return 2
    mode, path = sys.argv[1], sys.argv[2]
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
        doc = json.loads(text)
    except (OSError, ValueError) as e:
        print("ERROR: %s is not valid JSON: %s" % (path, e))
        return 1
    xs, _ = check_structure(doc)
    if not errors:
        {"two-regions": check_two_regions, "nowait": check_nowait,
         "odd-names": check_odd_names, "fatal-exit": check_fatal_exit,
         "any": lambda xs: None}[mode](xs)
    for e in errors:
        print("ERROR: " + e)
    if errors:
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
