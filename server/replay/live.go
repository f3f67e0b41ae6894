package replay

// The live exchange as a capture: every datagram the sessions' clients
// sent and received, stamped as the client saw it, so that the diff engine
// can judge a live run exactly as it judges a capture of one.

import (
	"io"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

// liveDatagram is one datagram of the live exchange.
type liveDatagram struct {
	at       time.Time
	src, dst netip.AddrPort
	wire     []byte // encrypted, as on the wire; a private copy
	seq      int    // order of recording, to keep equal stamps in order
}

// liveRecorder collects the datagrams of every session of a run.
type liveRecorder struct {
	mu   sync.Mutex
	dgs  []liveDatagram
	next int
}

func (r *liveRecorder) add(at time.Time, src, dst netip.AddrPort, wire []byte) {
	if r == nil {
		return
	}
	c := append([]byte(nil), wire...) // wall clock only: kernel stamps have no monotonic reading
	r.mu.Lock()
	r.dgs = append(r.dgs, liveDatagram{at: at.Round(0), src: src, dst: dst, wire: c, seq: r.next})
	r.next++
	r.mu.Unlock()
}

// Datagrams is the number of datagrams the run sent and received.
func (r *Result) Datagrams() int {
	if r.live == nil {
		return 0
	}
	return len(r.live.dgs)
}

// WriteLive writes the live exchange - every datagram the clients sent and
// received, in time order, stamped when the client sent or read it - as a
// pcap (Ethernet link) to w: what `bcwire diff` and the verdict read.
func (r *Result) WriteLive(w io.Writer) error {
	cw, err := capture.NewWriter(w, capture.PCAP, capture.Ethernet)
	if err != nil {
		return err
	}
	var dgs []liveDatagram
	if r.live != nil {
		r.live.mu.Lock()
		dgs = append(dgs, r.live.dgs...)
		r.live.mu.Unlock()
	}
	sort.SliceStable(dgs, func(i, j int) bool {
		if !dgs[i].at.Equal(dgs[j].at) {
			return dgs[i].at.Before(dgs[j].at)
		}
		return dgs[i].seq < dgs[j].seq
	})
	for i := range dgs {
		d := &dgs[i]
		if err := cw.WriteUDP(d.at, d.src, d.dst, d.wire); err != nil {
			return err
		}
	}
	return cw.Flush()
}
