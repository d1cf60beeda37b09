#!/usr/bin/env bash
# mpirun -np 4 lanes-info with LANES_NODE_SIZE=2 must show 2 nodes of 2 ranks and each rank's rail,
# in text and, with --json, as one JSON document holding the same layout, every variable and
# every collective's algorithms.
set -u
run_mpi=$1 info=$2
out=$(LANES_RAILS=lo,lo "$run_mpi" 4 2 "$info" 2>&1) || { echo "$out"; exit 1; }
echo "$out" | head -12
fail=0
echo "$out" | grep -q '^lanes: 4 ranks on 2 nodes (2,2), 2 lanes' || { echo "FAIL: summary line"; fail=1; }
for r in 0 1 2 3; do
  lane=$((r % 2))
  echo "$out" | grep -q "rank $r: local rank $lane, .*drives lane $lane (rail lo)" ||
    { echo "FAIL: rank $r's rail"; fail=1; }
done
for v in LANES_RAILS LANES_NODE_SIZE LANES_PROGRESS LANES_CHECK; do
  echo "$out" | grep -q "^$v " || { echo "FAIL: $v missing from the table"; fail=1; }
done

json=$(LANES_RAILS=lo,lo "$run_mpi" 4 2 "$info" --json 2>/dev/null) || { echo "FAIL: --json run"; exit 1; }
echo "$json" | python3 -c '
import json, sys
# One document, rank 0 alone prints it. UCX writes its log lines to stdout (UCX_LOG_FILE unset):
# a line of that kind around the document is shown, not held against lanes-info; a second
# document is.
text = sys.stdin.read()
start = text.index("{")
doc, end = json.JSONDecoder().raw_decode(text, start)
rest = (text[:start] + text[end:]).strip()
assert not rest.startswith("{") and "\n{" not in rest, "a second document"
if rest:
    print("lanes-info --json: other output beside the document:\n" + rest)
lay = doc["layout"]
assert lay["ranks"] == 4 and lay["lanes"] == 2, (lay["ranks"], lay["lanes"])
assert [len(n["ranks"]) for n in lay["nodes"]] == [2, 2], lay["nodes"]
for n in lay["nodes"]:
    assert [r["device"] for r in n["rails"]] == ["lo", "lo"], n["rails"]
    for r in n["ranks"]:
        assert r["local_rank"] == r["rank"] % 2 and r["lanes"] == [r["rank"] % 2], r
        assert r["rails"] == ["lo"], r
assert lay["this_process"]["rank"] == 0 and lay["this_process"]["rails"], lay["this_process"]
names = {v["name"]: v for v in doc["variables"]}
assert names["LANES_RAILS"]["value"] == "lo,lo", names["LANES_RAILS"]
for v in ("LANES_NODE_SIZE", "LANES_PROGRESS", "LANES_CHECK"):
    assert v in names, v
algos = doc["algorithms"]
for coll in ("bcast", "scatter", "gather", "alltoall", "allgather", "reduce", "allreduce",
             "barrier", "reduce_scatter_block"):
    assert algos[coll] and all(a["name"] and a["summary"] for a in algos[coll]), coll
assert "binomial" in [a["name"] for a in algos["bcast"]]
print("lanes-info --json: %d ranks, %d nodes, %d variables, %d algorithms" % (
    lay["ranks"], len(lay["nodes"]), len(names), sum(len(v) for v in algos.values())))
' || { echo "$json" | head -40; echo "..."; echo "$json" | tail -20; echo "FAIL: --json document"; fail=1; }
exit $fail
