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
	// errors, lost fragments. (Non-stock messages are Flow.NonStock.)
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
//
// While the source already holds the next records in memory (a file; see
// capture.Reader.Buffered), Run reads up to readAhead datagrams at once and
// decrypts them together with a dissect.BatchDecrypter, which runs many
// decryptions side by side (32 SIMD lanes where the CPU has AVX-512) and
// leaves the plaintexts where it decrypted them.
// Decryption depends on nothing but the datagram, so
// the records, and their order, are exactly those of one-at-a-time decoding.
// A capture.Reader is held (see its Hold) while Run reads ahead, so that the
// datagrams need not be copied aside.
func Run(src Source, t *Tracker, emit func(*Record) bool) (Summary, error) {
	var sum Summary
	out := &sink{until: emit}
	buffered, _ := src.(interface{ Buffered() int })
	// A *capture.Reader, the usual source, is read by a loop of its own
	// (readBatch.fromReader), which calls its small Buffered and StatsTo
	// directly, where they are inlined.
	reader, _ := src.(*capture.Reader)
	b := new(readBatch)
	var (
		rec        Record
		damagedRaw []byte // reused for checksum-damaged datagrams
	)
	for !out.stopped {
		// Take one datagram, and more while they are already in memory.
		var n, k int // datagrams read, and of them to decrypt
		var err error
		if reader != nil {
			n, k, err = b.fromReader(reader)
		} else {
			n, k, err = b.fromSource(src, buffered)
		}
		// A datagram read alone is decrypted by Datagram.
		if n > 1 {
			b.dec.Decrypt(b.plain[:k], b.raw[:k])
		}
		fed := b.feed(t, n, out)
		// Stopped with datagrams (or damage) read ahead but not reported.
		if out.stopped && (fed < n || err != nil && err != io.EOF) {
			sum.Damage = out.damage
			sum.Capture = b.before(fed)
			sum.Flow = t.Stats()
			return sum, nil
		}
		switch {
		case err == io.EOF:
			if !out.stopped {
				finish(src, t, out)
			}
			sum.Damage = out.damage
			sum.Capture = src.Stats()
			sum.Flow = t.Stats()
			return sum, nil
		case err != nil && !out.stopped:
			var pe *capture.PacketError
			if !errors.As(err, &pe) {
				sum.Damage = out.damage
				return sum, err
			}
			var payload []byte
			if pe.Packet != nil {
				payload = pe.Packet.Payload
			}
			rec = damagedRecord(pe, payload, &damagedRaw)
			out.put(&rec)
		}
	}
	sum.Damage = out.damage
	sum.Capture = src.Stats()
	sum.Flow = t.Stats()
	return sum, nil
}

// readBatch is what Run reads ahead at once. Its loops are methods of
// their own, with few variables each: as one function with Run, the loop
// kept more than the registers hold and moved them to and from the stack
// on every datagram.
type readBatch struct {
	// held grows to readAhead as batches need it (a capture of a few
	// datagrams, as the fuzz targets make, then costs little).
	held []heldDatagram
	// statsBefore[k] is the capture counters before held[k] was read
	// (k > 0; as long as held): if emit stops the run before a datagram's
	// turn, it was never read as far as the caller can tell. Only those at
	// from's indices are written: reading a usual datagram changes two
	// counters by one (capture.Reader.PlainLast), so from[k] is the last
	// index up to k whose counters were copied, and before(k) works out
	// the rest from there.
	statsBefore []capture.Stats
	from        []int
	// raw are the batch's datagrams to decrypt, in order, and plain
	// their plaintexts, which dec sets, in its own memory (valid until
	// the next batch).
	plain, raw [readAhead][]byte
	dec        dissect.BatchDecrypter
}

// grow makes room for one more held datagram (and its statsBefore),
// doubling up to readAhead.
func (b *readBatch) grow() {
	n := min(max(2*len(b.held), 8), readAhead)
	b.held = append(b.held, make([]heldDatagram, n-len(b.held))...)
	b.statsBefore = append(b.statsBefore, make([]capture.Stats, n-len(b.statsBefore))...)
	b.from = append(b.from, make([]int, n-len(b.from))...)
}

// before returns the capture counters before held[k] was read (k > 0).
func (b *readBatch) before(k int) capture.Stats {
	s, plain := b.statsBefore[b.from[k]], k-b.from[k]
	s.Records += plain
	s.UDP += plain
	return s
}

// fromReader reads a batch from a capture.Reader, held (see its Hold) so
// that the datagrams need not be copied aside: one datagram, and more
// while the next is already in memory, up to readAhead datagrams or
// readAheadBytes bytes. It returns how many it read (n), how many of them
// are to decrypt (k, in plain and raw), and the error that stopped it.
func (b *readBatch) fromReader(rd *capture.Reader) (n, k int, err error) {
	rd.Hold() // the datagrams stay where they were read
	size := 0
	for {
		if n == len(b.held) {
			b.grow()
		}
		if n > 0 {
			if size >= readAheadBytes || rd.Buffered() == 0 {
				break
			}
			// The counters after the last read: those before it and
			// one more record and datagram, when that is all it changed;
			// copied whole otherwise (and after the first datagram, for
			// before has none to count from before it).
			if n > 1 && rd.PlainLast() {
				b.from[n] = b.from[n-1]
			} else {
				b.from[n] = n
				rd.StatsTo(&b.statsBefore[n])
			}
		}
		var p *capture.Packet
		if p, err = rd.Next(); err != nil {
			break
		}
		h := &b.held[n]
		h.hold(p, true)
		size += len(h.raw)
		if !h.gameSpy {
			b.raw[k] = h.raw
			k++
		}
		if n++; n == readAhead {
			break
		}
	}
	// The payloads stay valid until the next read all the same.
	rd.Release()
	return n, k, err
}

// fromSource is fromReader for any other Source, reading ahead while
// buffered (when not nil) says more is in memory.
func (b *readBatch) fromSource(src Source, buffered interface{ Buffered() int }) (n, k int, err error) {
	size := 0
	for {
		if n == len(b.held) {
			b.grow()
		}
		if n > 0 {
			if size >= readAheadBytes || buffered == nil || buffered.Buffered() == 0 {
				break
			}
			b.from[n] = n
			b.statsBefore[n] = src.Stats()
		}
		var p *capture.Packet
		if p, err = src.Next(); err != nil {
			break
		}
		h := &b.held[n]
		h.hold(p, false)
		size += len(h.raw)
		if !h.gameSpy {
			b.raw[k] = h.raw
			k++
		}
		if n++; n == readAhead {
			break
		}
	}
	return n, k, err
}

// feed hands the batch's n datagrams to t, in order, until out stops; it
// returns how many it handed over. With more than one, they were
// decrypted together: the k-th to decrypt is in plain[k].
func (b *readBatch) feed(t *Tracker, n int, out *sink) int {
	batch := n > 1
	fed, k := 0, 0
	for ; fed < n && !out.stopped; fed++ {
		if h := &b.held[fed]; batch && !h.gameSpy {
			plain := b.plain[k]
			k++
			err := t.dg.Parse(plain)
			t.decrypted(&h.rec, plain, &t.dg, err, out)
		} else {
			t.datagram(&h.rec, h.raw, out)
		}
	}
	return fed
}

// readAhead is how many datagrams Run reads at once from a buffered source:
// enough that the BatchDecrypter can fill its 32 SIMD lanes evenly, few
// enough that the lanes stay in the CPU cache. On OpenBC's battle, 128
// datagrams keep 87% of the kernel's work useful (1.66 rows a datagram)
// and 256, the row form's chunk, 95% (1.52): the kernel's share of a perf
// profile of stats --json on OpenBC battle x40 fell from 9.8% to 8.4%
// (three profiles each), with the rest of Run's share unchanged.
const readAhead = 256

// readAheadBytes also bounds what Run reads ahead, for large datagrams: a
// held capture.Reader keeps what it has handed out where it is, and has to
// take a new buffer when it refills twice while held. Stock datagrams are
// at most a few hundred bytes, so readAhead is what stops their batches.
const readAheadBytes = 64 << 10

// heldDatagram is a datagram read ahead of its turn, with the record its
// records are built in. The source's Packet is only valid until its next
// call, so its fields are copied (straight into the record), and so is the
// payload unless the source keeps it (a held capture.Reader, see Hold).
type heldDatagram struct {
	rec     Record
	raw     []byte
	copied  []byte // the buffer raw is copied to, reused from datagram to datagram
	gameSpy bool   // not encrypted: GameSpy, or the master's TCP
}

// hold takes p. kept says the source keeps the payload where it is, which a
// capture.Reader does for all but reassembled datagrams.
func (h *heldDatagram) hold(p *capture.Packet, kept bool) {
	h.rec.Frame, h.rec.Time, h.rec.Src, h.rec.Dst, h.rec.TCP = p.Frame, p.Time, p.Src, p.Dst, p.TCP
	if kept && !p.Reassembled {
		h.raw = p.Payload
	} else {
		h.copied = append(h.copied[:0], p.Payload...)
		h.raw = h.copied
	}
	h.gameSpy = p.TCP.Valid || dissect.IsGameSpy(h.raw)
}

// damagedRecord is the record of a damaged capture record. A datagram that
// failed its checksum (pe.Packet set, its bytes in payload) keeps its time,
// addresses and bytes, decrypted into *raw like the Raw of every other
// damaged datagram, but is not dissected: corrupted bytes would be taken
// for sequence numbers and fragments and pollute the flow's state.
func damagedRecord(pe *capture.PacketError, payload []byte, raw *[]byte) Record {
	rec := Record{Kind: KindDamaged, Frame: pe.Frame, Time: pe.Time, Err: fmt.Errorf("capture record: %w", pe)}
	if p := pe.Packet; p != nil {
		if *raw == nil {
			*raw = make([]byte, 0, 2048) // non-nil even for an empty payload: Raw nil means no datagram
		}
		*raw = append((*raw)[:0], payload...)
		if !dissect.IsGameSpy(payload) {
			dissect.Decrypt(*raw, payload)
		}
		rec.Time, rec.Src, rec.Dst, rec.Raw, rec.Datagram = p.Time, p.Src, p.Dst, *raw, *raw
		if len(payload) > 0 {
			rec.Peer = (*raw)[0]
		}
	}
	return rec
}

// finish reports what never completed: fragmented game messages, then IPv4
// datagrams.
func finish(src Source, t *Tracker, out *sink) {
	t.Finish(out.put)
	var rec Record
	for _, f := range src.Incomplete() {
		rec = Record{Kind: KindLost, Frame: f.FirstFrame, Time: f.FirstTime,
			Err: fmt.Errorf("IPv4 datagram %s -> %s id %d never completed: %d fragments, %d bytes", f.Src, f.Dst, f.ID, f.Fragments, f.Bytes)}
		out.put(&rec)
	}
}
