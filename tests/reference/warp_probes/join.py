"""Joins Nsight Compute's CSVs (ncu1.csv, ncu2.csv) to the launches the host program printed under
Nsight Compute (ncu_launches.jsonl), in profiling order: the k-th profiled kernel is the k-th launch.
Writes ncu_join.jsonl: one row per launch with its id, spec and every metric measured, as numbers, and
their units."""
import csv
import json
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "."
launches = [json.loads(line) for line in open(f"{folder}/ncu_launches.jsonl") if line.startswith("{")]
measured = [dict() for _ in launches]
units = {}
for name in ("ncu1.csv", "ncu2.csv"):
    try:
        rows = list(csv.DictReader(open(f"{folder}/{name}")))
    except FileNotFoundError:
        continue
    ids = sorted({int(row["ID"]) for row in rows})
    for row in rows:
        k = ids.index(int(row["ID"]))
        if k < len(measured):
            value = row["Metric Value"].replace(",", "")
            # A metric that does not apply to a kernel reads "n/a": left out.
            if value not in ("", "n/a"):
                measured[k][row["Metric Name"]] = float(value)
            units[row["Metric Name"]] = row["Metric Unit"]
with open(f"{folder}/ncu_join.jsonl", "w") as out:
    for launch, metrics in zip(launches, measured):
        row = {"id": launch["id"], "spec": launch["spec"], "measured": metrics, "units": units}
        out.write(json.dumps(row, sort_keys=True) + "\n")
print(f"joined {len(launches)} launches")
