package flow

import (
	"errors"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// RunParallel is Run with the stateless work spread over goroutines: one
// reads the capture, workers decrypt the datagrams in batches, and the
// calling goroutine does the rest (splitting, and everything that depends
// on order: flows, reassembly, game decoding, emit) exactly as Run does,
// batch by batch in capture order. The records, their order and the
// Summary are the same as Run's. workers < 1 means 1; a fixed number of
// batches is recycled, so memory stays bounded and steady state allocates
// nothing.
func RunParallel(src Source, t *Tracker, workers int, emit func(*Record) bool) (Summary, error) {
	workers = max(workers, 1)
	nb := 2*workers + 2
	p := &pipeline{
		free:  make(chan *batch, nb),
		work:  make(chan *batch, nb),
		order: make(chan *batch, nb),
		done:  make(chan struct{}),
	}
	for range nb {
		p.free <- &batch{ready: make(chan struct{}, 1)}
	}
	p.wg.Add(1 + workers)
	go p.read(src)
	for range workers {
		go p.decrypt()
	}

	var sum Summary
	out := &sink{until: emit}
	var rec Record
	var raw []byte
	var stopStats capture.Stats // what the source had read when emit stopped the run
	for b := range p.order {
		<-b.ready
		for i := range b.items {
			it := &b.items[i]
			switch it.kind {
			case itemDamaged:
				rec = damagedRecord(it.perr, it.in(b.raw), &raw)
				out.put(&rec)
			case itemGameSpy:
				t.gamespy(it.record(&t.rec), it.in(b.raw), out)
			default:
				// Split here rather than on the decrypting goroutine:
				// the messages then land in the Tracker's own Datagram,
				// which stays in this core's cache, where a Datagram per
				// item, written on another core, missed it on every
				// message.
				t.plain(it.record(&t.rec), it.in(b.plain), out)
			}
			if out.stopped {
				stopStats = b.statsAfter(i)
				break
			}
		}
		p.free <- b
		if out.stopped {
			break
		}
	}
	close(p.done)
	p.wg.Wait() // the reader no longer touches src
	if p.err != nil {
		sum.Damage = out.damage
		return sum, p.err
	}
	sum.Capture = stopStats
	if !out.stopped {
		finish(src, t, out)
		sum.Capture = src.Stats()
	}
	sum.Damage = out.damage
	sum.Flow = t.Stats()
	return sum, nil
}

// batchItems and batchBytes bound one batch.
const (
	batchItems = 256
	batchBytes = 64 << 10
)

type batch struct {
	items []item
	raw   []byte // the payloads as read
	plain []byte // the same, decrypted (GameSpy datagrams are left out)
	// marks are the source's counters after reading some of the items,
	// for the rare run that emit stops (see statsAfter): the first item's,
	// and those of every item after which they changed otherwise than by
	// one record and one datagram (capture.Reader.PlainLast), so that a
	// usual datagram copies none.
	marks []statsMark
	// dsts and srcs are the encrypted datagrams' places in plain and raw,
	// for dissect.DecryptBatch.
	dsts, srcs [][]byte
	ready      chan struct{}
}

// statsMark is the source's counters after reading items[at].
type statsMark struct {
	at int
	s  capture.Stats
}

// statsAfter returns the source's counters after reading items[i], as Run
// reports them when emit stops the run at that item: those of the last
// mark up to i, and one record and one datagram for each item after it.
func (b *batch) statsAfter(i int) capture.Stats {
	m := len(b.marks) - 1
	for b.marks[m].at > i {
		m--
	}
	s, plain := b.marks[m].s, i-b.marks[m].at
	s.Records += plain
	s.UDP += plain
	return s
}

// next extends items by one.
func (b *batch) next() *item {
	if len(b.items) < cap(b.items) {
		b.items = b.items[:len(b.items)+1]
	} else {
		b.items = append(b.items, item{})
	}
	return &b.items[len(b.items)-1]
}

// item is one datagram of a batch, or one damaged capture record. It holds
// only what the record needs: it is written on the reading goroutine and
// read on the tracking one, so each byte of it crosses between cores.
type item struct {
	frame    int
	ts       time.Time
	src, dst netip.AddrPort
	perr     *capture.PacketError
	off, n   int32 // payload position in raw and plain (a batch holds less than 2 GiB)
	tcp      capture.TCPSegment
	kind     itemKind
}

type itemKind uint8

const (
	itemPlain   itemKind = iota // encrypted: decrypted into plain, then split
	itemGameSpy                 // not encrypted: GameSpy, or the master's TCP
	itemDamaged                 // a damaged capture record (perr)
)

// in returns the item's payload in buf (raw or plain).
func (it *item) in(buf []byte) []byte { return buf[it.off : it.off+it.n : it.off+it.n] }

// record sets the frame, time and addresses of r, the record the item's
// records are built in, and returns it.
func (it *item) record(r *Record) *Record {
	r.Frame, r.Time, r.Src, r.Dst, r.TCP = it.frame, it.ts, it.src, it.dst, it.tcp
	return r
}

type pipeline struct {
	free, work, order chan *batch
	done              chan struct{}
	wg                sync.WaitGroup
	err               error // a reading failure that ends the capture
}

// read fills batches from src in capture order.
func (p *pipeline) read(src Source) {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	// A *capture.Reader, the usual source, says when a datagram changed
	// its counters only by one record and one datagram: then no mark.
	rd, _ := src.(*capture.Reader)
	for {
		var b *batch
		select {
		case b = <-p.free:
		case <-p.done:
			return
		}
		b.items, b.raw, b.marks = b.items[:0], b.raw[:0], b.marks[:0]
		end := false
		for len(b.items) < batchItems && len(b.raw) < batchBytes {
			pk, err := src.Next()
			if err == io.EOF {
				end = true
				break
			}
			if err != nil {
				var pe *capture.PacketError
				if !errors.As(err, &pe) {
					p.err = err
					end = true
					break
				}
				cp := *pe
				it := b.next()
				*it = item{kind: itemDamaged, perr: &cp, off: int32(len(b.raw))}
				if pe.Packet != nil { // a datagram that failed its checksum: keep its bytes
					pk := *pe.Packet
					it.n = int32(len(pk.Payload))
					b.raw = append(b.raw, pk.Payload...)
					pk.Payload = nil // the reader reuses it; the copy in raw is what the record shows
					cp.Packet = &pk
				}
				b.mark(src)
				continue
			}
			it := b.next()
			it.frame, it.ts, it.src, it.dst, it.tcp = pk.Frame, pk.Time, pk.Src, pk.Dst, pk.TCP
			it.off, it.n, it.perr, it.kind = int32(len(b.raw)), int32(len(pk.Payload)), nil, itemPlain
			if pk.TCP.Valid || dissect.IsGameSpy(pk.Payload) {
				it.kind = itemGameSpy
			}
			b.raw = append(b.raw, pk.Payload...)
			if len(b.items) == 1 || rd == nil || !rd.PlainLast() {
				b.mark(src)
			}
		}
		if len(b.items) > 0 {
			p.order <- b // never blocks: at most nb batches exist
			p.work <- b
		} else {
			p.free <- b
		}
		if end {
			return
		}
	}
}

// mark keeps the source's counters after the batch's last item.
func (b *batch) mark(src Source) {
	if len(b.marks) < cap(b.marks) {
		b.marks = b.marks[:len(b.marks)+1]
	} else {
		b.marks = append(b.marks, statsMark{})
	}
	m := &b.marks[len(b.marks)-1]
	m.at = len(b.items) - 1
	if rd, ok := src.(*capture.Reader); ok {
		rd.StatsTo(&m.s)
	} else {
		m.s = src.Stats()
	}
}

// decrypt decrypts the datagrams of each batch.
func (p *pipeline) decrypt() {
	defer p.wg.Done()
	for b := range p.work {
		if cap(b.plain) < len(b.raw) {
			b.plain = make([]byte, len(b.raw), cap(b.raw))
		}
		b.plain = b.plain[:len(b.raw)]
		// The batch's datagrams are decrypted together, as flow.Run's
		// read-ahead does: several cipher chains at once (SIMD where the
		// CPU has it) cost a fraction of one datagram after another.
		b.dsts, b.srcs = b.dsts[:0], b.srcs[:0]
		for i := range b.items {
			if it := &b.items[i]; it.kind == itemPlain {
				b.dsts = append(b.dsts, it.in(b.plain))
				b.srcs = append(b.srcs, it.in(b.raw))
			}
		}
		dissect.DecryptBatch(b.dsts, b.srcs)
		b.ready <- struct{}{}
	}
}
