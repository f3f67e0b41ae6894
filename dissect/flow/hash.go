// This file holds the hash relays are matched by: a message's payload
// hashed once per record for every consumer that matches copies
// (session's relay rule and the measures' relay matrix).

package flow

import (
	"encoding/binary"
	"math/bits"
)

// MessageHash hashes a message eight bytes at a time (byte-wise FNV-1a
// cost three times the instructions): each word is mixed in by a
// multiplication and a rotation, the last one overlapping the one before
// when the length is not a multiple of eight, and a final avalanche makes
// the low bits, which pick a hash chain, depend on every byte. Its values
// are kept nowhere: only which hashes are equal matters.
func MessageHash(b []byte) uint64 {
	n := len(b)
	h := uint64(14695981039346656037) ^ uint64(n)*hashMul
	if n < 16 || n > 32 {
		return messageHashOther(b, h)
	}
	// Most messages (a client's StateUpdate is some 28 bytes): the first
	// 16 bytes and the last 16, which overlap when n < 32, cover them.
	h = hashWord(h, binary.LittleEndian.Uint64(b))
	h = hashWord(h, binary.LittleEndian.Uint64(b[8:]))
	h = hashWord(h, binary.LittleEndian.Uint64(b[n-16:]))
	h = hashWord(h, binary.LittleEndian.Uint64(b[n-8:]))
	return hashFinal(h)
}

// messageHashOther is MessageHash of messages shorter than 16 bytes or
// longer than 32, from h, its length's seed.
func messageHashOther(b []byte, h uint64) uint64 {
	n := len(b)
	switch {
	case n >= 8:
		for i := 0; i+8 < n; i += 8 {
			h = hashWord(h, binary.LittleEndian.Uint64(b[i:]))
		}
		// The last 8 bytes, overlapping the word before when n is not a
		// multiple of 8.
		h = hashWord(h, binary.LittleEndian.Uint64(b[n-8:]))
	case n >= 4:
		h = hashWord(h, uint64(binary.LittleEndian.Uint32(b))|uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32)
	case n > 0:
		h = hashWord(h, uint64(b[0])|uint64(b[n/2])<<8|uint64(b[n-1])<<16)
	}
	return hashFinal(h)
}

const hashMul = 0x9E3779B97F4A7C15

// hashWord mixes the word w into h.
func hashWord(h, w uint64) uint64 { return bits.RotateLeft64((h^w)*hashMul, 29) }

// hashFinal is the avalanche that ends a hash.
func hashFinal(h uint64) uint64 {
	h ^= h >> 32
	h *= hashMul
	return h ^ h>>29
}

// PayloadHash is MessageHash(r.Payload). On the records a Tracker makes it
// is computed once per message, however many consumers ask (a record
// built by hand computes it on each call).
func (r *Record) PayloadHash() uint64 {
	if r.hashState == hashDone {
		return r.hash
	}
	r.hash = MessageHash(r.Payload)
	r.hashState *= hashDone // pending becomes done; none stays none
	return r.hash
}

// Record.hashState values: whether Record.hash holds PayloadHash.
const (
	hashNone    = 0 // not a Tracker's record for this payload: compute it each time
	hashPending = 1 // the Tracker set Payload; not yet computed
	hashDone    = 3 // hash holds it
)
