#!/usr/bin/python3
# Parses every line of a JSON export with Tetragon's own protos, as
# Tetragon's consumers read it: json_format.Parse into GetEventsResponse,
# unknown fields refused. Usage: tetragon_check.py PB_DIR FILE...
# PB_DIR holds the Python modules protoc made from Tetragon's protos.
# Prints "lines N" and one "bad FILE:LINE: why" per line that fails; exits 1
# when any does (or when there is no line at all).
import sys

sys.path.insert(0, sys.argv[1])
from google.protobuf import json_format  # noqa: E402
from tetragon import events_pb2  # noqa: E402

lines = bad = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8", errors="strict") as f:
        for n, line in enumerate(f, 1):
            lines += 1
            try:
                json_format.Parse(line, events_pb2.GetEventsResponse())
            except Exception as e:  # ParseError, or a JSON error
                bad += 1
                print(f"bad {path}:{n}: {str(e)[:300]}")
print(f"lines {lines}")
sys.exit(1 if bad or not lines else 0)
