// Package inorder puts the reliable messages of one connection back in
// sequence order. transport.Conn drops duplicates and reassembles
// fragments but hands messages over as they arrive; a receiver that must
// not act on message n+1 before message n (a relay must not forward a
// ship's fire before the ship's creation) holds the early ones here.
package inorder

import (
	"time"

	"github.com/bcwire/bcwire/server/transport"
)

// Buffer orders the deliveries of one connection, per channel. Stock peers
// number each channel from 0. A message numbered more than MaxHeld ahead of
// the next one expected is implausible (garbage, or a peer far out of step)
// and dropped. When the expected message has not come for MaxWait while
// later ones wait, it is given up on: delivery resumes at the oldest held
// message, and what arrives for the skipped numbers later is dropped. A
// gap is given up on at once when the messages held behind it pass
// MaxHeldBytes, so a peer that never fills a gap costs bounded memory.
type Buffer struct {
	MaxWait      time.Duration // default 10s
	MaxHeld      int           // per channel, default 256
	MaxHeldBytes int           // payload bytes over both channels, default 256 KiB

	ch        [2]channel
	heldBytes int
}

type channel struct {
	next    uint16
	held    map[uint16]transport.Delivery
	gapFrom time.Time // since when next has been waited for
}

// Push adds the deliveries of one datagram (received at now) and returns
// what can be handed on, in order. Unreliable messages pass at once.
func (b *Buffer) Push(now time.Time, ds []transport.Delivery) []transport.Delivery {
	var out []transport.Delivery
	for _, d := range ds {
		if !d.Reliable {
			out = append(out, d)
			continue
		}
		c := &b.ch[d.Type.Channel()]
		diff := int(int16(d.Seq - c.next))
		switch {
		case diff < 0 || diff > b.maxHeld():
			continue // already delivered, given up on, or implausible
		case diff == 0:
			out = append(out, d)
			c.next++
			out = b.drain(c, out)
			c.gapFrom = now
		default:
			if c.held == nil {
				c.held = map[uint16]transport.Delivery{}
			}
			if len(c.held) == 0 {
				c.gapFrom = now
			}
			if old, ok := c.held[d.Seq]; ok {
				b.heldBytes -= len(old.Payload)
			}
			c.held[d.Seq] = d
			b.heldBytes += len(d.Payload)
		}
	}
	return b.Flush(now, out)
}

// Flush gives up on gaps that have waited too long (call it now and then
// even when nothing arrives) and returns out with what that releases.
func (b *Buffer) Flush(now time.Time, out []transport.Delivery) []transport.Delivery {
	wait := b.MaxWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	for i := range b.ch {
		c := &b.ch[i]
		for len(c.held) > 0 && (now.Sub(c.gapFrom) > wait || b.heldBytes > b.maxHeldBytes()) {
			// Skip to the oldest held message.
			best, first := uint16(0), true
			for s := range c.held {
				if first || int16(s-c.next) < int16(best-c.next) {
					best, first = s, false
				}
			}
			c.next = best
			out = b.drain(c, out)
			c.gapFrom = now
		}
	}
	return out
}

func (b *Buffer) maxHeldBytes() int {
	if b.MaxHeldBytes <= 0 {
		return 256 << 10
	}
	return b.MaxHeldBytes
}

func (b *Buffer) maxHeld() int {
	if b.MaxHeld <= 0 {
		return 256
	}
	return b.MaxHeld
}

// Held is the number of messages waiting for a gap to close.
func (b *Buffer) Held() int { return len(b.ch[0].held) + len(b.ch[1].held) }

func (b *Buffer) drain(c *channel, out []transport.Delivery) []transport.Delivery {
	for {
		d, ok := c.held[c.next]
		if !ok {
			return out
		}
		b.heldBytes -= len(d.Payload)
		delete(c.held, c.next)
		out = append(out, d)
		c.next++
	}
}
