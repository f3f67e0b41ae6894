#!/usr/bin/env bash
# record-openbc-battle.sh OPENBC_DIR [OUT]: re-record the OpenBC capture of
# the benchmark corpus (testdata/openbc/networked-battle.pcap by default).
#
# OPENBC_DIR is a built clone of OpenBC's public repository (`make` there
# first). The script runs its test_networked_battle binary from OPENBC_DIR,
# as OpenBC's Makefile does: four test clients play a battle against
# OpenBC's own server (UDP 29900), and tcpdump records the loopback traffic
# beside it. Nothing in OPENBC_DIR is changed except the trace file that the
# test itself writes there (battle_trace.bin), which is removed again.
#
# The capture is written next to OUT and renamed over it only when the test
# passed and tcpdump saw traffic, so a failed run leaves the old file.
# Needs root (or CAP_NET_RAW) for tcpdump on lo, and UDP ports 29700-29999
# and 27900 free. Not run in CI: it needs an OpenBC build.
# Exit status: 0 recorded, 1 the test or the capture failed, 2 usage.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -x "$1/build/tests/test_networked_battle" ]; then
  echo "usage: $0 OPENBC_DIR [OUT]   (OPENBC_DIR: an OpenBC clone built with make)" >&2
  exit 2
fi
openbc=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$repo/testdata/openbc/networked-battle.pcap}
tmp="$out.partial"
had_trace=0
[ -e "$openbc/battle_trace.bin" ] && had_trace=1

tcpdump -i lo -U -s 0 -w "$tmp" 'udp and (portrange 29700-29999 or port 27900)' 2>/dev/null &
tp=$!
cleanup() {
  kill -INT "$tp" 2>/dev/null || true
  rm -f "$tmp"
}
trap cleanup EXIT
sleep 1.5 # tcpdump has no "ready" signal; give it time to open lo

rc=0
(cd "$openbc" && timeout 300 build/tests/test_networked_battle >/dev/null 2>&1) || rc=$?
sleep 1.5 # the last datagrams and the server's shutdown
kill -INT "$tp"
wait "$tp" || true
if [ "$had_trace" = 0 ]; then rm -f "$openbc/battle_trace.bin"; fi

if [ "$rc" -ne 0 ]; then
  echo "test_networked_battle failed (exit $rc); $out left as it was" >&2
  exit 1
fi
n=$(tcpdump -r "$tmp" 2>/dev/null | wc -l)
if [ "$n" -eq 0 ]; then
  echo "tcpdump recorded nothing; $out left as it was" >&2
  exit 1
fi
mv -f "$tmp" "$out"
trap - EXIT
echo "$out: $n packets, OpenBC $(git -C "$openbc" log -1 --format=%h 2>/dev/null || echo '(commit unknown)')"
