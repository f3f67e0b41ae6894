package flow

import (
	"errors"
	"fmt"
	"io"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// Summary is what a whole capture produced.
type Summary struct {
	Capture capture.Stats
	Flow    Stats
	// Damage counts records that carry an error: damaged packets, framing
	// errors, game messages that failed to decode, lost fragments.
	Damage int
}

// Clean reports whether nothing was damaged.
func (s Summary) Clean() bool { return s.Damage == 0 }

// Source yields UDP datagrams: *capture.Reader is one.
type Source interface {
	Next() (*capture.Packet, error)
	Stats() capture.Stats
	Incomplete() []capture.FragmentSetInfo
}

// Run feeds every datagram of src through t and emits the records; damaged
// capture records become KindDamaged records and never stop the run. emit
// returning false stops early (for -c COUNT). The error is only for reading
// failures that end the capture (not damage, which is counted).
func Run(src Source, t *Tracker, emit func(*Record) bool) (Summary, error) {
	var sum Summary
	stopped := false
	count := func(r *Record) {
		if r.Err != nil {
			sum.Damage++
		}
		if !stopped && !emit(r) {
			stopped = true
		}
	}
	var rec Record
	var raw []byte
	for !stopped {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *capture.PacketError
			if !errors.As(err, &pe) {
				return sum, err
			}
			var payload []byte
			if pe.Packet != nil {
				payload = pe.Packet.Payload
			}
			rec = damagedRecord(pe, payload, &raw)
			count(&rec)
			continue
		}
		t.Datagram(p.Frame, p.Time, p.Src, p.Dst, p.Payload, count)
	}
	if !stopped {
		finish(src, t, count)
	}
	sum.Capture = src.Stats()
	sum.Flow = t.Stats()
	return sum, nil
}

// damagedRecord is the record of a damaged capture record. A datagram that
// failed its checksum (pe.Packet set, its bytes in payload) keeps its time,
// addresses and bytes, decrypted into *raw like the Raw of every other
// damaged datagram, but is not dissected: corrupted bytes would be taken
// for sequence numbers and fragments and pollute the flow's state.
func damagedRecord(pe *capture.PacketError, payload []byte, raw *[]byte) Record {
	rec := Record{Kind: KindDamaged, Frame: pe.Frame, Err: fmt.Errorf("capture record: %w", pe)}
	if p := pe.Packet; p != nil {
		if *raw == nil {
			*raw = make([]byte, 0, 2048) // non-nil even for an empty payload: Raw nil means no datagram
		}
		*raw = append((*raw)[:0], payload...)
		if !dissect.IsGameSpy(payload) {
			dissect.Decrypt(*raw, payload)
		}
		rec.Time, rec.Src, rec.Dst, rec.Raw = p.Time, p.Src, p.Dst, *raw
		if len(payload) > 0 {
			rec.Peer = (*raw)[0]
		}
	}
	return rec
}

// finish reports what never completed: fragmented game messages, then IPv4
// datagrams.
func finish(src Source, t *Tracker, count func(*Record)) {
	t.Finish(count)
	var rec Record
	for _, f := range src.Incomplete() {
		rec = Record{Kind: KindLost, Frame: f.FirstFrame, Time: f.FirstTime,
			Err: fmt.Errorf("IPv4 datagram %s -> %s id %d never completed: %d fragments, %d bytes", f.Src, f.Dst, f.ID, f.Fragments, f.Bytes)}
		count(&rec)
	}
}
