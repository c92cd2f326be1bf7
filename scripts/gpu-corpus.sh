#!/usr/bin/env bash
# The generated cheat corpus's CUDA variants (scripts/cheat-corpus.py) over every GPU of a
# node, in one call to a GPU machine: each target's variants are dealt round-robin into
# parts (PARTS_PER_GPU per visible GPU in all; a part holds one target's variants, so it
# makes one baseline), each part one `cheat-corpus.py` process pinned to its GPU
# (CUDA_VISIBLE_DEVICES), and the parts' tables merged into one. Parts on one GPU share
# maxcode's per-GPU timing lock, so only their builds and checks overlap, never their timed
# runs. Verdicts do not depend on the split: each part has its own baseline and A/A.
# It scales poorly past one GPU, for a reason not yet found (docs/evaluation.md "The
# generated cheat corpus" has the figures).
# A part whose maxcode run reaches LIMIT_S keeps the verdicts it wrote; the rest of its
# variants are "not judged" in the table.
#
# Usage (on the GPU machine, .gpu carried; see scripts/gpu-check.sh):
#   OUT=/path scripts/gpu-corpus.sh            # every CUDA variant
# Environment: OUT (default maxcode-out/gpu-corpus), PARTS_PER_GPU (default 3),
# LIMIT_S (seconds per part's maxcode run, default 480), SEED (only with SAMPLE), SAMPLE
# (default all), VARIANTS (a file of TARGET:ID lines, e.g. those no earlier run judged),
# TARGETS (default cuda-plain,cuda-kernels), MAX_ROUNDS (default 12).
# Writes only OUT/table.md, OUT/table.json (merged) and OUT/parts.log (few files travel back
# from a GPU machine); prints the table last.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-env.sh gpu-corpus
targets=${TARGETS:-cuda-plain,cuda-kernels}
per_gpu=${PARTS_PER_GPU:-3}
mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader)
[ ${#gpus[@]} -gt 0 ] || { echo "gpu-corpus: no GPU (nvidia-smi lists none)" >&2; exit 2; }
nvidia-smi --query-gpu=index,name --format=csv,noheader | sed 's/^/gpu: /'
sample=()
[ -n "${SAMPLE:-}" ] && sample=(--sample "$SAMPLE" --seed "${SEED:-1}")
work=${WORK:-maxcode-out/gpu-corpus-work}
rm -rf "$work" && mkdir -p "$work"
if [ -n "${VARIANTS:-}" ]; then grep -v '^$' "$VARIANTS" > "$work/all.txt"
else python3 scripts/cheat-corpus.py --list --targets "$targets" "${sample[@]}" | awk 'NF == 3 {print $1 ":" $3}' > "$work/all.txt"
fi
parts=$(( ${#gpus[@]} * per_gpu ))
# Parts per target in proportion to its variants (at least one each); a target's
# variants dealt round-robin over its parts.
awk -F: -v parts=$parts -v dir="$work" '
  { t = $1; sub(/\/.*/, "", t); if (!(t in n)) order[++k] = t; list[t, n[t]++] = $0; total++ }
  END {
    p = 0
    for (i = 1; i <= k; i++) {
      t = order[i]; m = int(parts * n[t] / total + 0.5); if (m < 1) m = 1; if (i == k) m = parts - p; if (m < 1) m = 1
      for (j = 0; j < n[t]; j++) print list[t, j] > (dir "/part-" (p + j % m) ".txt")
      p += m
    }
  }' "$work/all.txt"
parts=$(ls "$work"/part-*.txt | wc -l)
echo "gpu-corpus: $(wc -l < "$work/all.txt") variants in $parts parts over ${#gpus[@]} GPU(s)"
for f in "$work"/part-*.txt; do paste -sd, "$f" > "$f.csv" && mv "$f.csv" "$f"; done
t0=$(date +%s)
for ((p = 0; p < parts; p++)); do
  [ -s "$work/part-$p.txt" ] || continue
  gpu=${gpus[$((p % ${#gpus[@]}))]}
  CUDA_VISIBLE_DEVICES=$gpu python3 scripts/cheat-corpus.py --targets "$targets" --gpu yes \
    --variants "@$work/part-$p.txt" --max-rounds "${MAX_ROUNDS:-12}" --timeout "${LIMIT_S:-480}" \
    --out "$work/part-$p" > "$work/part-$p.log" 2>&1 &
done
wait
echo "gpu-corpus: parts done in $(( $(date +%s) - t0 )) s"
for ((p = 0; p < parts; p++)); do echo "== part $p (GPU ${gpus[$((p % ${#gpus[@]}))]}): $(cat "$work/part-$p.txt")"; cat "$work/part-$p.log"; tail -40 "$work/part-$p/runs/"*.log 2>/dev/null; done > "$out/parts.log"
tables=()
for ((p = 0; p < parts; p++)); do [ -f "$work/part-$p/table.json" ] && tables+=("$work/part-$p/table.json"); done
python3 scripts/cheat-corpus.py --targets "$targets" "${sample[@]}" --merge "${tables[@]}" --out "$work/merged" > "$work/merge.log" 2>&1
rc=$?
cp "$work/merged/table.md" "$work/merged/table.json" "$out/" 2>/dev/null || { cat "$work/merge.log"; exit 2; }
cat "$out/table.md"
exit $rc
