#!/usr/bin/env bash
# Reproduces bcwire's speed and memory figures side by side with tshark.
#
#   bench/compare.sh [COPIES]      (default 100: ~540,000 datagrams, 62 MB)
#
# It builds bcwire (and bcwire-full, for export) and makes two large
# captures: COPIES time-shifted copies of the bundled 4-player battle, and
# 40 copies of OpenBC's networked battle test (testdata/openbc, a real
# peer's traffic: OPENBC_COPIES). On each it times:
#   - tshark -n -r FILE -T fields -e udp.length   (a bare UDP pass, no BC decoding)
#   - bcwire stats --json FILE           (what users run: full decode - decrypt,
#                                        split, reassemble, decode every opcode,
#                                        build sessions - and the measures)
#   - the same with --no-measures        (sessions only, the row earlier
#                                        figures were taken with)
#   - bcwire stats --json pinned to one core with taskset (the Go runtime,
#     its garbage collector included, then shares that core)
#   - bcwire stats FILE                 (the text tables)
#   - bcwire decode --json FILE > /dev/null, and text decode
#   - bcwire export -o DIR FILE         (Parquet)
# and prints wall and CPU (user+sys) seconds, datagrams per second, the
# peak resident memory (GNU time -v) and the ratios to tshark in wall time
# and in CPU. Each row is the run of best wall time of RUNS (default 3); a
# bcwire run is the mean of REPS (default 5) back-to-back processes.
# With PAIRS=N it then times tshark against stats --json, decode --json
# and text decode in N alternating pairs (bench/pairs.sh) and prints the
# median ratios: this machine's speed drifts within seconds, which moves
# a best-of-RUNS ratio of runs a tenth of a second long by a third.
# tshark and GNU time are installed from Debian if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${1:-100}
OPENBC_COPIES=${OPENBC_COPIES:-40}
RUNS=${RUNS:-3}
REPS=${REPS:-5}
WORK=${WORK:-$(mktemp -d)}

need() { command -v "$1" >/dev/null 2>&1; }
if ! need tshark || [ ! -x /usr/bin/time ]; then
  echo "installing tshark and time from Debian..." >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tshark time >/dev/null
fi

go build -o "$WORK/" ./cmd/bcwire ./cmd/bcwire/bcwire-full # export runs in bcwire-full
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"

# measure NAME CMD... : the run of best wall time: wall (s), CPU (s), peak RSS (KiB).
# bcwire's rows run the command REPS times (default 5) under one GNU time and
# divide: its runs on the OpenBC capture take about 0.1 s, and GNU time
# prints hundredths, too coarse for a ratio. The peak RSS is the largest of
# the REPS processes (GNU time reports the children's maximum).
measure() {
  local name=$1; shift
  local reps=$REPS
  [ "$name" = tshark ] && reps=1
  local best="" cpu="" rss=""
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/time.out" \
      sh -c 'n=$1; shift; i=0; while [ $i -lt $n ]; do "$@" >/dev/null 2>&1; i=$((i+1)); done' sh "$reps" "$@" || true
    read -r t u s m < <(tail -n 1 "$WORK/time.out")
    t=$(awk "BEGIN{print $t/$reps}"); c=$(awk "BEGIN{print ($u+$s)/$reps}")
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; cpu=$c; rss=$m; fi
  done
  printf '%-28s %8.3f s %8.3f s %12.0f dgram/s %8.1f MiB\n' "$name" "$best" "$cpu" "$(awk "BEGIN{print $UDP/$best}")" "$(awk "BEGIN{print $rss/1024}")"
  eval "T_${name//[^A-Za-z0-9]/_}=$best C_${name//[^A-Za-z0-9]/_}=$cpu"
}

# compare FILE: every run on FILE, then the ratios to tshark
compare() {
  FILE=$1
  UDP=$(tshark -n -r "$FILE" -T fields -e udp.length 2>/dev/null | wc -l) # speeds count UDP datagrams, as tshark sees them
  echo
  echo "capture: $FILE ($(du -h "$FILE" | cut -f1), $UDP UDP datagrams), load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-28s %10s %10s %20s %12s\n' "run" "wall" "cpu" "speed" "peak RSS"
  measure "tshark" tshark -n -r "$FILE" -T fields -e udp.length
  measure "stats_json" "$WORK/bcwire" stats --json -q "$FILE"
  measure "stats_json_no_measures" "$WORK/bcwire" stats --json --no-measures -q "$FILE"
  measure "stats_json_one_core" taskset -c 0 "$WORK/bcwire" stats --json -q "$FILE"
  measure "stats_text" "$WORK/bcwire" stats -q "$FILE"
  # not -q: decode -q prints no packets (as tshark's -q); measure sends stdout to /dev/null
  measure "decode_json" "$WORK/bcwire" decode --json "$FILE"
  measure "decode_text" "$WORK/bcwire" decode "$FILE"
  measure "export" sh -c 'rm -rf "$1" && exec "$2" export -q -o "$1" "$3"' sh "$WORK/export" "$WORK/bcwire" "$FILE"
  for v in stats_json stats_json_no_measures stats_json_one_core stats_text decode_json decode_text export; do
    eval "t=\$T_$v c=\$C_$v"
    printf '%-28s %6.1fx tshark in wall time, %6.1fx in CPU\n' "$v" "$(awk "BEGIN{print $T_tshark/$t}")" "$(awk "BEGIN{print $C_tshark/($c>0?$c:0.01)}")"
  done
  if [ "${PAIRS:-0}" -gt 0 ]; then
    echo "tshark against bcwire in $PAIRS alternating pairs (tshark/bcwire: how many times faster bcwire is):"
    for v in "stats --json -q" "decode --json" "decode"; do
      printf '%-28s %s\n' "$v" "$(bench/pairs.sh "$PAIRS" "tshark -n -r $FILE -T fields -e udp.length" "$WORK/bcwire $v $FILE")"
    done
  fi
}

BATTLE="$WORK/battle-x$COPIES.pcap"
[ -f "$BATTLE" ] || go run ./bench/repeat -n "$COPIES" -o "$BATTLE" testdata/pcaps/battle.pcap
OPENBC="$WORK/openbc-battle-x$OPENBC_COPIES.pcap"
[ -f "$OPENBC" ] || go run ./bench/repeat -n "$OPENBC_COPIES" -o "$OPENBC" testdata/openbc/networked-battle.pcap
compare "$BATTLE"
compare "$OPENBC"
