"""Joins Nsight Compute's CSV (ncu.csv) to the launches of time.jsonl, by kernel, into
ncu_join.jsonl: one row per launch with its id, spec and every metric measured, as numbers."""
import csv
import json
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "."
measured = {}
for row in csv.DictReader(open(f"{folder}/ncu.csv")):
    kernel = row["Kernel Name"].split("(")[0]
    value = row["Metric Value"].replace(",", "")
    measured.setdefault(kernel, {})[row["Metric Name"]] = float(value)
with open(f"{folder}/ncu_join.jsonl", "w") as out:
    for line in open(f"{folder}/time.jsonl"):
        if not line.startswith("{"):
            continue
        launch = json.loads(line)
        kernel = launch["spec"]["kernel"]
        row = {"id": launch["id"], "spec": launch["spec"], "measured": measured[kernel]}
        out.write(json.dumps(row, sort_keys=True) + "\n")
