#!/usr/bin/python3
# Parses every line of a JSON export with Tetragon's own protos, as
# Tetragon's consumers read it: json_format.Parse into GetEventsResponse,
# unknown fields refused. Usage: tetragon_check.py PB_DIR [--vigil] FILE...
# PB_DIR holds the Python modules protoc made from Tetragon's protos.
# --vigil: the lines are vigil's own form, a superset of Tetragon's
# (docs/events.md): the fields it documents as its own are taken out
# first, and everything left must parse just as strictly, so a field that
# has a Tetragon name has Tetragon's type and values in both forms. Lines
# of vigil's own kinds (vigil_loss, vigil_heartbeat, ...: no Tetragon
# field) are counted apart, not parsed.
# Prints "lines N" and one "bad FILE:LINE: why" per line that fails; exits 1
# when any does (or when there is no line at all).
import json
import sys

sys.path.insert(0, sys.argv[1])
from google.protobuf import json_format  # noqa: E402
from tetragon import events_pb2  # noqa: E402

# vigil's own fields, by the object they are in (docs/events.md).
VIGIL_TOP = {"seq"}
VIGIL_PROCESS = {"ppid", "cgroup_id", "cgroup"}
VIGIL_KIND = {
    "process_tracepoint": {"rule_id", "rule_action", "signal", "outcome", "monitor", "path",
                           "path_truncated", "binary", "flags", "result", "intent", "inode",
                           "dev"},
}


def vigil_only_out(ev):
    for k in VIGIL_TOP:
        ev.pop(k, None)
    for kind, body in ev.items():
        if not isinstance(body, dict):
            continue
        for k in VIGIL_KIND.get(kind, ()):
            body.pop(k, None)
        for p in ("process", "parent"):
            if isinstance(body.get(p), dict):
                for k in VIGIL_PROCESS:
                    body[p].pop(k, None)
    return ev


args = sys.argv[2:]
vigil = args[:1] == ["--vigil"]
if vigil:
    args = args[1:]
KINDS = {f.name for f in events_pb2.GetEventsResponse.DESCRIPTOR.oneofs_by_name["event"].fields}
lines = bad = own = 0
for path in args:
    with open(path, encoding="utf-8", errors="strict") as f:
        for n, line in enumerate(f, 1):
            lines += 1
            try:
                if vigil:
                    ev = json.loads(line)
                    if not KINDS & set(ev):
                        own += 1
                        continue
                    line = json.dumps(vigil_only_out(ev))
                json_format.Parse(line, events_pb2.GetEventsResponse())
            except Exception as e:  # ParseError, or a JSON error
                bad += 1
                print(f"bad {path}:{n}: {str(e)[:300]}")
print(f"lines {lines}" + (f", {own} of vigil's own kinds" if vigil else ""))
sys.exit(1 if bad or not lines else 0)
