"""Prints, as JSON, what torch_hook_test.cpp checks in a PyTorch snapshot pickle, read with Python's own
unpickler (independent of gpumemtrace's code): its segments and its history.

Run as:  python3 snapshot_facts.py SNAPSHOT.pickle
"""
import json
import pickle
import sys

with open(sys.argv[1], "rb") as f:
    snapshot = pickle.load(f)

segments = [{"address": s["address"], "total_size": s["total_size"], "allocated_size": s["allocated_size"],
             "blocks": len(s["blocks"])} for s in snapshot["segments"]]
history = [{"action": e["action"], "addr": e.get("addr", e.get("device_free")), "size": e["size"],
            "frame": e["frames"][0]["name"] if e["frames"] else ""} for e in snapshot["device_traces"][0]]
print(json.dumps({"segments": segments, "history": history}))
