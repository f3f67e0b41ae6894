#!/usr/bin/env bash
# live-cpu.sh measures what `bcwire live --stats-only -q` costs beside a
# 16-player server: it generates the 16-player capture (bcwire synth), replays
# it on loopback at its own pace (bench/pace), and reads the live process's
# CPU time (utime + stime, /proc/PID/stat) from just before the replay to
# just after it. Needs root (live capture). Extra arguments go to live, e.g.
#
#   sudo bench/live-cpu.sh                # the default capture path
#   sudo bench/live-cpu.sh --recvmsg     # the old path: one recvmsg per packet
#
# Environment: PORT (default 24600), CAP (default /tmp/p16.pcap), RUNS (1).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-24600}
CAP=${CAP:-/tmp/p16.pcap}
RUNS=${RUNS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/bcwire ./cmd/bcwire/bcwire-full # live runs in bcwire-full
go build -o "$tmp/pace" ./bench/pace
[ -s "$CAP" ] || "$tmp/bcwire" synth --players 16 --duration 62s -w "$CAP" >/dev/null
hz=$(getconf CLK_TCK)

# cpu PID: utime + stime in clock ticks (fields 14 and 15, counted after
# the parenthesised command name, which may hold spaces).
cpu() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

for run in $(seq "$RUNS"); do
	"$tmp/bcwire" live -i lo --port "$PORT" --stats-only -q "$@" >/dev/null &
	pid=$!
	sleep 1
	c0=$(cpu "$pid")
	t0=$(date +%s.%N)
	"$tmp/pace" -port "$PORT" "$CAP" 2>"$tmp/pace.err"
	sleep 0.2 # let live drain the socket
	c1=$(cpu "$pid")
	t1=$(date +%s.%N)
	kill -INT "$pid"
	wait "$pid" || true
	awk -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v p="$(cat "$tmp/pace.err")" 'BEGIN {
		cpu = c / hz; wall = t1 - t0
		printf "%s; live CPU %.2f s in %.1f s: %.2f%% of one core\n", p, cpu, wall, 100 * cpu / wall
	}'
done
