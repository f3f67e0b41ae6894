#!/usr/bin/env bash
# Reproduces bcwire's speed and memory figures side by side with tshark.
#
#   bench/compare.sh [COPIES]      (default 100: ~951,000 datagrams, 97 MB)
#
# It builds bcwire, makes a large capture of COPIES time-shifted copies of
# the bundled 4-player battle (bench/repeat), then times on that one file:
#   - tshark -n -r FILE -T fields -e udp.length   (a bare UDP pass, no BC decoding)
#   - bcwire stats --json --no-measures FILE (full decode: decrypt, split, reassemble,
#                                        decode every opcode, build sessions)
#   - the same pinned to one core with taskset (the Go runtime, its garbage
#     collector included, then shares that core)
#   - bcwire stats --json --no-measures --workers 2 FILE
#   - bcwire stats FILE                 (the text tables)
#   - bcwire decode --json FILE > /dev/null
# and prints datagrams per second, the speed ratio to tshark and the peak
# resident memory of each (GNU time -v). Each timing is the best of RUNS
# (default 3) runs. tshark and GNU time are installed from Debian if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${1:-100}
RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d)}

need() { command -v "$1" >/dev/null 2>&1; }
if ! need tshark || [ ! -x /usr/bin/time ]; then
  echo "installing tshark and time from Debian..." >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tshark time >/dev/null
fi

go build -o "$WORK/bcwire" ./cmd/bcwire
FILE="$WORK/battle-x$COPIES.pcap"
[ -f "$FILE" ] || go run ./bench/repeat -n "$COPIES" -o "$FILE" testdata/pcaps/battle.pcap
DGRAMS=$("$WORK/bcwire" stats --json "$FILE" 2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) Bridge Commander datagrams.*/\1/p')
# Speeds are in UDP datagrams (Bridge Commander and GameSpy), as tshark sees them.
UDP=$(tshark -n -r "$FILE" -T fields -e udp.length 2>/dev/null | wc -l)
echo "capture: $FILE ($(du -h "$FILE" | cut -f1), $UDP UDP datagrams, $DGRAMS Bridge Commander)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# measure NAME CMD... : best wall time (s) and the peak RSS (KiB) of that run
measure() {
  local name=$1; shift
  local best="" rss=""
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f '%e %M' -o "$WORK/time.out" "$@" >/dev/null 2>&1 || true
    read -r t m < "$WORK/time.out"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
  done
  printf '%-34s %8.2f s %12.0f dgram/s %8.1f MiB\n' "$name" "$best" "$(awk "BEGIN{print $UDP/$best}")" "$(awk "BEGIN{print $rss/1024}")"
  eval "T_${name//[^A-Za-z0-9]/_}=$best"
}

printf '%-34s %10s %20s %12s\n' "run" "wall" "speed" "peak RSS"
measure "tshark" tshark -n -r "$FILE" -T fields -e udp.length
measure "bcwire_stats_json" "$WORK/bcwire" stats --json --no-measures -q "$FILE"
measure "bcwire_stats_json_one_core" taskset -c 0 "$WORK/bcwire" stats --json --no-measures -q "$FILE"
measure "bcwire_stats_json_workers2" "$WORK/bcwire" stats --json --no-measures -q --workers 2 "$FILE"
measure "bcwire_stats_text" "$WORK/bcwire" stats -q "$FILE"
measure "bcwire_stats_text_workers2" "$WORK/bcwire" stats -q --workers 2 "$FILE"
measure "bcwire_decode_json" "$WORK/bcwire" decode --json -q "$FILE"
echo
for v in bcwire_stats_json bcwire_stats_json_one_core bcwire_stats_json_workers2 bcwire_stats_text bcwire_stats_text_workers2 bcwire_decode_json; do
  eval "t=\$T_$v"
  printf '%-34s %6.1fx faster than tshark\n' "$v" "$(awk "BEGIN{print $T_tshark/$t}")"
done
