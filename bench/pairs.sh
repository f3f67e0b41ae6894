#!/usr/bin/env bash
# Times two commands in alternating pairs and prints the medians of their
# ratios: ratios that survive a machine whose speed drifts from one
# second to the next, where the best of a few runs does not.
#
#   bench/pairs.sh N 'COMMAND A' 'COMMAND B'
#
# Runs A and B N times each, alternately, the order swapped every pair
# (A B, B A, A B, ...), each command's output sent to /dev/null, each under
# bash's time (milliseconds: a run of a tenth of a second is still
# measured to 1%). Prints the median and quartiles of A/B in wall time and
# in CPU time (user+sys of the command and its children), and each
# command's median wall and CPU seconds. A command is run by sh -c: quote
# it whole, with its arguments.
set -euo pipefail
n=${1:?usage: bench/pairs.sh N 'COMMAND A' 'COMMAND B'}
a=${2:?usage: bench/pairs.sh N 'COMMAND A' 'COMMAND B'}
b=${3:?usage: bench/pairs.sh N 'COMMAND A' 'COMMAND B'}
out=$(mktemp)
trap 'rm -f "$out" "$out.t"' EXIT
run() { # run CMD: prints its wall and CPU seconds
  local TIMEFORMAT='%3R %3U %3S'
  { time sh -c "exec $1 >/dev/null 2>&1" || true; } 2>"$out.t"
  awk 'END {print $1, $2+$3}' "$out.t"
}
for i in $(seq "$n"); do
  if [ $((i % 2)) = 1 ]; then ra=$(run "$a"); rb=$(run "$b"); else rb=$(run "$b"); ra=$(run "$a"); fi
  echo "$ra $rb" >>"$out"
done
# median and quartiles of a column (awk: sort, then the interpolated points)
awk -v n="$n" '
function q(arr, k, p,   i, t, h, f) { # the p-quantile of arr[1..k], sorted here
  for (i = 2; i <= k; i++) { t = arr[i]; h = i - 1; while (h > 0 && arr[h] > t) { arr[h+1] = arr[h]; h-- } arr[h+1] = t }
  h = (k - 1) * p + 1; f = int(h); return (f >= k) ? arr[k] : arr[f] + (h - f) * (arr[f+1] - arr[f])
}
{ k++; wr[k] = ($3 > 0) ? $1 / $3 : 0; cr[k] = ($4 > 0) ? $2 / $4 : 0; wa[k] = $1; ca[k] = $2; wb[k] = $3; cb[k] = $4 }
END {
  for (i = 1; i <= k; i++) { w1[i] = wr[i]; w2[i] = wr[i]; w3[i] = wr[i]; c1[i] = cr[i]; c2[i] = cr[i]; c3[i] = cr[i] }
  printf "%d pairs: A/B wall %.3f (quartiles %.3f-%.3f), CPU %.3f (%.3f-%.3f); medians A %.3f s wall %.3f s CPU, B %.3f s wall %.3f s CPU\n",
    k, q(w1, k, 0.5), q(w2, k, 0.25), q(w3, k, 0.75), q(c1, k, 0.5), q(c2, k, 0.25), q(c3, k, 0.75), q(wa, k, 0.5), q(ca, k, 0.5), q(wb, k, 0.5), q(cb, k, 0.5)
}' "$out"
