#!/usr/bin/env bash
# test_pcie_host_hop.sh: a peer-to-peer PCIe ring of more than two GPUs a node crosses the host
# between root ports or sockets (NCCL takes P2P only behind one PCIe switch), at the host's rate
# (models/hosts.csv host_hop_busbw_bytes_per_s), and the warning says so and how to override it:
# 8 RTX A6000 warn naming the rate, the host and busbw_gbyte_per_s=; 2 do not (one switch, or
# P2P across an AMD CPU); a measured busbw_gbyte_per_s= takes the place of the hop (no warning,
# the step as given); host=server-spr's faster socket link shortens the step; GeForce (no P2P) is
# through the host already and is not warned of a hop, but of its ring priced at the GPU's link
# (EC_WARN_THROUGH_HOST), unless its host has a through-host rate of its own; a hosts.csv whose hop
# is not a number fails naming the file and the column.
#   bash tests/cli/test_pcie_host_hop.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_pcie_host_hop.sh path/to/epochcast}
MODELS=${EPOCHCAST_MODELS:?EPOCHCAST_MODELS must name the models/ folder}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

# step ARGS...: the predicted step time in seconds.
step() { col step_s "$("$EC" predict "$@" --csv)"; }

A="model=bert-large task=squad gpu=rtx-a6000 precision=amp_fp16 batch_per_gpu=8 seq_len=384"
# hosts.csv's cells (quoted commas in them): python3's csv module reads and writes them
hop=$(python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["id"] == "default": print("%.1f" % (float(r["host_hop_busbw_bytes_per_s"]) / 1e9))' "$MODELS/hosts.csv")
out=$("$EC" predict $A num_gpus=8 2>&1)
if grep -qF "8 GPUs a node over PCIe peer-to-peer" <<<"$out" && grep -qF "at $hop GB/s (host=default" <<<"$out" &&
   grep -qF "host_hop_busbw_bytes_per_s" <<<"$out" && grep -qF "busbw_gbyte_per_s=" <<<"$out"; then
  ok "8 A6000: the host hop is said with its rate ($hop GB/s), host and override"
else bad "8 A6000: the host hop is said with its rate ($hop GB/s), host and override" "$out"; fi

out=$("$EC" predict $A num_gpus=2 2>&1)
if grep -qF "PCIe peer-to-peer" <<<"$out"; then bad "2 A6000: no host hop" "$out"; else ok "2 A6000: no host hop"; fi

out=$("$EC" predict $A num_gpus=8 busbw_gbyte_per_s=24 2>&1)
if grep -qF "PCIe peer-to-peer" <<<"$out"; then bad "a measured busbw: no warning" "$out"
else ok "a measured busbw: no warning"; fi

slow=$(step $A num_gpus=8)
fast=$(step $A num_gpus=8 busbw_gbyte_per_s=24)
spr=$(step $A num_gpus=8 host=server-spr)
if awk -v s="$slow" -v f="$fast" -v p="$spr" 'BEGIN { exit !(s > p && p >= f) }'; then
  ok "8 A6000: the default host's hop > server-spr's >= a 24 GB/s ring ($slow > $spr >= $fast s)"
else bad "8 A6000: the default host's hop > server-spr's >= a 24 GB/s ring" "$slow / $spr / $fast"; fi

out=$("$EC" predict model=bert-large task=squad gpu=rtx3090 precision=amp_fp16 batch_per_gpu=8 seq_len=384 \
      num_gpus=4 2>&1)
if grep -qF "PCIe peer-to-peer" <<<"$out"; then bad "4 RTX 3090 (no P2P): not warned" "$out"
else ok "4 RTX 3090 (no P2P): not warned"; fi
# ...but its ring through host memory is priced at the GPU's link, which the default host does not
# bound: said, with a host that has a rate of its own (hosts.csv through_host_busbw_bytes_per_s)
if grep -qF "NCCL's ring priced at the GPU's link, 4.2 GB/s" <<<"$out" && grep -qF "host=server-epyc: 1.47 GB/s" <<<"$out"
then ok "4 RTX 3090: the through-host ring at the link said, with server-epyc's rate"
else bad "4 RTX 3090: the through-host ring at the link said, with server-epyc's rate" "$out"; fi
out=$("$EC" predict model=bert-large task=squad gpu=rtx3090 precision=amp_fp16 batch_per_gpu=8 seq_len=384 \
      num_gpus=4 host=server-epyc 2>&1)
if grep -qF "through host memory" <<<"$out"; then bad "4 RTX 3090 on server-epyc: its rate, no warning" "$out"
else ok "4 RTX 3090 on server-epyc: its rate, no warning"; fi

mkdir -p "$tmp/m" && cp -r "$MODELS"/. "$tmp/m/"
python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
c = rows[0].index("host_hop_busbw_bytes_per_s")
for r in rows[1:]:
    r[c] = "fast" if r[0] == "default" else r[c]
csv.writer(open(sys.argv[2], "w"), lineterminator="\n").writerows(rows)' "$MODELS/hosts.csv" "$tmp/m/hosts.csv"
out=$(EPOCHCAST_MODELS="$tmp/m" "$EC" predict $A num_gpus=8 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -qF "hosts.csv:2:" <<<"$out" && grep -qF "host_hop_busbw_bytes_per_s" <<<"$out"; then
  ok "a hop that is not a number: the file, line and column named"
else bad "a hop that is not a number: the file, line and column named" "rc $rc: $out"; fi

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
