#!/usr/bin/env bash
# test_default_fabric.sh: a layout across nodes without network= takes the network of its GPU's
# reference system (models/reference_systems.csv, issue 39 item 5) and the warning names it:
# 64 H100 run on DGX H100's 8 x 400 Gb/s NDR InfiniBand (3200 Gb/s per node, the same step as
# network=ib-ndr-400), 16 A100 SXM on DGX A100's HDR, 16 A10G on a PCIe server's 100 GbE; one
# node, network= and network_gbit_per_s= take no default; a models/ folder without the file
# keeps constants.csv's 200 Gb/s; a reference_systems.csv naming an unknown network or GPU
# fails to load with its file and GPU named.  The reference system's machine size sets the
# nodes when gpus_per_node is not given (16 V100-SXM3 are one DGX-2).
#   bash tests/cli/test_default_fabric.sh path/to/epochcast      (EPOCHCAST_MODELS set)
set -u
EC=${1:?usage: test_default_fabric.sh path/to/epochcast}
MODELS=${EPOCHCAST_MODELS:?EPOCHCAST_MODELS must name the models/ folder}
. "$(dirname "$0")/lib/harness.sh"
harness_tmp

# has NAME TEXT NEEDLE...: every needle is in TEXT.
has() {
  local name=$1 text=$2; shift 2
  for k in "$@"; do
    if ! grep -qF -- "$k" <<<"$text"; then bad "$name" "lacks '$k': $text"; return 1; fi
  done
  ok "$name"
}

H="model=llama-3.1-8b gpu=h100-sxm5-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=2048 strategy=fsdp"
out=$("$EC" predict $H num_gpus=64 2>&1)
has "64 H100: DGX H100's NDR named, 3.2 Tb/s per node" "$out" \
    "no network= given: DGX H100's 8 x 400 Gb/s NDR InfiniBand assumed" "network=ib-ndr-400" \
    "3200 Gb/s per node" "models/reference_systems.csv"
dflt=$(col step_s "$("$EC" predict $H num_gpus=64 --csv)")
ndr=$(col step_s "$("$EC" predict $H num_gpus=64 network=ib-ndr-400 --csv)")
old=$(col step_s "$("$EC" predict $H num_gpus=64 network_gbit_per_s=200 --csv)")
if [ -n "$dflt" ] && [ "$dflt" = "$ndr" ]; then ok "64 H100: the default prices the step as network=ib-ndr-400"
else bad "64 H100: the default prices the step as network=ib-ndr-400" "default $dflt, ib-ndr-400 $ndr"; fi
if [ -n "$dflt" ] && awk -v a="$dflt" -v b="$old" 'BEGIN { exit !(a < b) }'; then
  ok "64 H100: faster than on 200 Gb/s per node ($dflt < $old s)"
else bad "64 H100: faster than on 200 Gb/s per node" "default $dflt, 200 Gb/s $old"; fi

out=$("$EC" predict model=llama-3.1-8b gpu=a100-sxm4-80gb precision=amp_bf16 batch_per_gpu=1 seq_len=2048 \
      strategy=fsdp num_gpus=16 2>&1)
has "16 A100 SXM: DGX A100's HDR" "$out" "DGX A100's 8 x 200 Gb/s HDR InfiniBand assumed" "1600 Gb/s per node"
out=$("$EC" predict model=bert-base gpu=a10g precision=amp_fp16 batch_per_gpu=8 num_gpus=16 2>&1)
has "16 A10G: a PCIe server's 100 GbE" "$out" "a PCIe GPU server (AWS g5.48xlarge class)'s 100 GbE assumed" \
    "100 Gb/s per node"

# Machines of the reference system's size (gpus_per_node): a DGX-2 holds 16 V100-SXM3, so 16 of
# them are one node (no network) and 64 are four nodes of 16 on its 8 EDR ports; gpus_per_node=
# still wins, and other GPUs' machines hold 8 (constants.csv gpus_per_node).
V="model=bert-large task=pretrain gpu=v100-sxm3-32gb precision=amp_fp16 batch_per_gpu=8 seq_len=512 optimizer=lamb"
out=$("$EC" predict $V num_gpus=16 2>&1)
if grep -qF "no network= given" <<<"$out"; then bad "16 V100-SXM3: one DGX-2, no network" "$out"
else ok "16 V100-SXM3: one DGX-2, no network"; fi
out=$("$EC" predict $V num_gpus=64 2>&1)
has "64 V100-SXM3: nodes of 16 on DGX-2's EDR" "$out" "DGX-2's 8 x 100 Gb/s EDR InfiniBand assumed" \
    "800 Gb/s per node of 16 GPUs"
one=$(col step_s "$("$EC" predict $V num_gpus=16 --csv)")
two=$(col step_s "$("$EC" predict $V num_gpus=16 gpus_per_node=8 --csv)")
if [ -n "$one" ] && awk -v a="$one" -v b="$two" 'BEGIN { exit !(a < b) }'; then
  ok "16 V100-SXM3: one node is faster than gpus_per_node=8's two ($one < $two s)"
else bad "16 V100-SXM3: one node is faster than gpus_per_node=8's two" "one $one, two $two"; fi
out=$("$EC" predict $H num_gpus=16 2>&1)
has "16 H100: nodes of 8" "$out" "3200 Gb/s per node of 8 GPUs"

for extra in "num_gpus=8" "num_gpus=64 network=ib-hdr-200" "num_gpus=64 network_gbit_per_s=800"; do
  out=$("$EC" predict $H $extra 2>&1)
  if grep -qF "no network= given" <<<"$out" || grep -qF "default network" <<<"$out"; then
    bad "$extra: no default network" "$out"
  else ok "$extra: no default network"; fi
done

# A models/ folder without reference_systems.csv: constants.csv's default, said as before.
mkdir "$tmp/m"
cp -R "$MODELS"/. "$tmp/m/"
rm "$tmp/m/reference_systems.csv"
out=$(EPOCHCAST_MODELS="$tmp/m" "$EC" predict $H num_gpus=64 2>&1)
has "no reference_systems.csv: 200 Gb/s per node" "$out" "8 nodes joined by the default network, 200 Gb/s per node"

# A bad reference_systems.csv: the load fails naming the file, the GPU and the bad id.
bad_table() {
  local name=$1 sedexpr=$2; shift 2
  sed "$sedexpr" "$MODELS/reference_systems.csv" >"$tmp/m/reference_systems.csv"
  local out rc
  out=$(EPOCHCAST_MODELS="$tmp/m" "$EC" predict $H num_gpus=64 2>&1); rc=$?
  if [ "$rc" -eq 0 ]; then bad "$name" "exit 0: $out"; return; fi
  has "$name" "$out" "reference_systems.csv" "$@"
}
bad_table "unknown network" 's/^h100-sxm5-80gb,DGX H100,ib-ndr-400,/h100-sxm5-80gb,DGX H100,ib-ndr-4000,/' \
    "gpu 'h100-sxm5-80gb'" "network 'ib-ndr-4000'"
bad_table "unknown gpu" 's/^h100-sxm5-80gb,/h100-sxm9,/' "gpu 'h100-sxm9'"
bad_table "duplicate gpu" 's/^t4,/a16,/' "duplicate id 'a16'"
bad_table "half a GPU per node" 's/^v100-sxm3-32gb,DGX-2,ib-edr-800,\([^,]*\),16,/v100-sxm3-32gb,DGX-2,ib-edr-800,\1,15.5,/' \
    "gpu 'v100-sxm3-32gb'" "gpus_per_node 15.5 is not a whole number"

echo "$((n - fails)) of $n passed"
[ "$fails" -eq 0 ]
