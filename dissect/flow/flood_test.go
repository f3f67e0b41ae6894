package flow

import (
	"encoding/binary"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// A million bogus fragments - each the first of a 5-part message that never
// completes, from 20000 different clients - must keep the reassembly and
// flow state under the caps, count the evictions, and take bounded time.
func TestFragmentFloodStaysUnderCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds a million datagrams")
	}
	const n = 1_000_000
	opts := Options{MaxFragmentSets: 1024, MaxFragmentBytes: 1 << 20, MaxFlows: 4096}
	tr := New(opts)
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	plain := make([]byte, 2+7+200)
	plain[0], plain[1] = 0x02, 1
	plain[2] = byte(dissect.TypeData)
	binary.LittleEndian.PutUint16(plain[3:], 0x8000|0x2000|uint16(len(plain)-2)) // reliable, fragment
	plain[7], plain[8] = 0, 5                                                    // fragment 0 of 5
	wire := make([]byte, len(plain))
	records := 0
	emit := func(r *Record) { records++ }
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := uint64(0)
	start, startCPU := time.Now(), processCPU()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		binary.LittleEndian.PutUint16(plain[5:], uint16(i))
		for j := 9; j < len(plain); j += 8 {
			plain[j] = byte(i)
		}
		dissect.Encrypt(wire, plain)
		client := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i / 256 % 80), byte(i)}), 50000)
		tr.Datagram(i+1, ts.Add(time.Duration(i)*time.Millisecond), client, server, wire, emit)
		if i%100_000 == 99_999 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
			if sets, bytes := tr.frags.Pending(); sets > opts.MaxFragmentSets || bytes > opts.MaxFragmentBytes {
				t.Fatalf("after %d fragments: %d sets, %d bytes pending, over the caps", i+1, sets, bytes)
			}
		}
	}
	elapsed, cpu := time.Since(start), processCPU()-startCPU
	st := tr.Stats()
	t.Logf("%d fragments in %v (%v of CPU): %d sets evicted, %d flows evicted, peak heap growth %.1f MiB", n, elapsed, cpu, st.FragmentsEvicted, st.FlowsEvicted, float64(peak)/(1<<20))
	if st.FragmentsEvicted < n-opts.MaxFragmentSets {
		t.Errorf("%d sets evicted, want at least %d", st.FragmentsEvicted, n-opts.MaxFragmentSets)
	}
	if st.Flows > opts.MaxFlows || st.FlowsEvicted == 0 {
		t.Errorf("%d flows held, %d evicted (cap %d)", st.Flows, st.FlowsEvicted, opts.MaxFlows)
	}
	// Fragment payloads under 1 MiB, 1024 sets, 4096 flows: a few MiB at most.
	if peak > 16<<20 {
		t.Errorf("heap grew by %.1f MiB", float64(peak)/(1<<20))
	}
	// Bounded time: CPU time, not wall time, which a loaded machine
	// stretches without limit (72 s once beside two busy loops; 31 s of
	// wall for 4.2 s of CPU at load 27). A quadratic eviction would take
	// far longer than 60 s of CPU.
	if cpu > 60*time.Second {
		t.Errorf("took %v of CPU", cpu)
	}
	lost := 0
	tr.Finish(func(r *Record) { lost++ })
	if lost != tr.Stats().FragmentsLost || lost > opts.MaxFragmentSets {
		t.Errorf("Finish reported %d lost sets", lost)
	}
}
