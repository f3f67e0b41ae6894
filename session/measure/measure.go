// Package measure computes, for one capture, the wire measures OpenBC's
// developers compute by hand in their parity reports (docs/bugs/bug-reports/
// 20260226-stateupdate-authority-and-cadence-gap.md and the trace analyses it
// cites): StateUpdate cadence per ship lane, the flag-family mix per
// direction, the relay matrix per
// opcode, messages per datagram, object-id ranges and death sequences.
// `bcwire stats --json` prints them and `bcwire diff` compares them (its
// stateupdate-rate, stateupdate-flags, relay and datagram-size rules).
package measure

import (
	"fmt"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// Published stock figures the measures are compared with, as OpenBC's
// cadence-gap report and the trace analyses it cites give them.
const (
	// StockDownstreamCadence: server-to-client 0x20 updates per ship lane,
	// avg 0.101 s, p50 0.100 s, p90 0.110 s.
	StockDownstreamCadence = "stock S->C 0x20 updates per ship lane: avg 0.101 s, p50 0.100 s, p90 0.110 s; OpenBC's downstream 0.142 s (OpenBC cadence-gap report, 20260226)"
	// StockUpstreamCadence: client updates, median 96 ms.
	StockUpstreamCadence = "stock client upstream StateUpdates: median 96 ms (OpenBC cadence-gap report, 20260226)"
	// StockFamilies: which flag families dominate each direction.
	StockFamilies = "stock upstream dominated by 0x8x/0x9x, downstream by 0x20 and 0x3x (OpenBC cadence-gap report, 20260226)"
	// StockSubsystemBytes: the byte distribution inside 0x20 blocks.
	StockSubsystemBytes = "downstream 0x20 blocks' byte distribution qualitatively aligned with stock's (OpenBC cadence-gap report, 20260226, acceptance criterion 3)"
	// StockRelay: who receives a client's message.
	StockRelay = "stock: chat goes to every player including its sender, combat events to the others only (OpenBC trace analyses)"
	// StockBundling: the most messages stock put in one datagram.
	StockBundling = "stock's most messages in one datagram: 110 (OpenBC trace analyses)"
)

// Family is a StateUpdate flags byte's family: its high nibble, written
// "0x2x" (0x20 subsystems alone and 0x2x with motion both fall in it).
type Family uint8

// FamilyOf is the family of a flags byte.
func FamilyOf(f game.StateFlags) Family { return Family(uint8(f) >> 4) }

func (f Family) String() string { return fmt.Sprintf("0x%Xx", uint8(f)) }

// MarshalText writes the family as "0x2x".
func (f Family) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Dirs name the two directions, index 0 client to server.
var Dirs = [2]string{"C->S", "S->C"}

func dirIndex(d game.Direction) int {
	if d == game.ServerToClient {
		return 1
	}
	return 0
}

// Lane is one ship lane's StateUpdates: one object, one direction, one
// flag family (Family "all" for every family together), and the spacing of
// consecutive updates.
type Lane struct {
	// What an update touches comes first, within some 64 bytes: its
	// last time, the count (Finish sets Updates from it), the shared
	// intervals' window. (Spread over the struct they took a cache miss
	// or two an update on real runs. The usual update touches only the
	// window's buckets: its flow's shipSet holds the rest until sync.)
	last    wallclock.Time
	updates int
	// sh counts, on a family lane, the intervals it shares with its
	// ship's every-update lane (and the 0x20-bearing one, for a family
	// carrying subsystems): those of an update that follows one of the
	// same family, the usual case, when all of them last counted the
	// same update. One window takes them where each lane's took them
	// apart; Finish adds them to each (Builder.shareIntervals).
	sh window
	// iv counts the lane's other intervals.
	iv histogram
	// fam and dir are Family and Dir as indexes (fam: slotOf's family,
	// familyAll or familySubsystems).
	fam, dir uint8

	Object game.ObjectID `json:"object"`
	Dir    string        `json:"dir"`
	Family string        `json:"family"`
	// To is the client the lane goes to (S->C) or comes from (C->S).
	To      string  `json:"client"`
	Updates int     `json:"updates"`
	MeanMS  float64 `json:"interval_mean_ms"`
	P50MS   float64 `json:"interval_p50_ms"`
	P90MS   float64 `json:"interval_p90_ms"`
}

// Cadence pools the lanes of one direction and family: the interval
// percentiles over every lane's intervals.
type Cadence struct {
	Dir       string  `json:"dir"`
	Family    string  `json:"family"`
	Lanes     int     `json:"lanes"`
	Intervals int     `json:"intervals"`
	MeanMS    float64 `json:"interval_mean_ms"`
	P50MS     float64 `json:"interval_p50_ms"`
	P90MS     float64 `json:"interval_p90_ms"`
}

// Bundling is how many messages the datagrams of one direction carried.
type Bundling struct {
	Dir       string      `json:"dir"`
	Datagrams int         `json:"datagrams"`
	Max       int         `json:"max"`
	MaxFrame  int         `json:"max_frame"`
	Mean      float64     `json:"mean"`
	P90       int         `json:"p90"`
	Counts    map[int]int `json:"distribution"` // messages in a datagram -> datagrams
}

// RelayRow is, for one opcode, who received the clients' messages: the
// sender itself (an echo) and the other clients in the game.
type RelayRow struct {
	Opcode   string `json:"opcode"`
	Messages int    `json:"messages"` // client messages sent while another client was connected
	ToSender int    `json:"to_sender"`
	ToOthers int    `json:"to_others"`  // copies to other clients
	Expected int    `json:"others_due"` // copies had every message gone to every other client
	Shares   string `json:"receivers"`  // "sender 100%, others 100%"
	op       game.Opcode
}

// IDRange is the object ids seen in one owner's block (0x3FFFFFFF + slot x
// 0x40000), as offsets into the block; Slot -1 for ids outside player
// blocks.
type IDRange struct {
	Slot      int           `json:"slot"`
	Base      game.ObjectID `json:"base"`
	Objects   int           `json:"objects"`
	MinOffset int64         `json:"min_offset"`
	MaxOffset int64         `json:"max_offset"`
	Dropped   int           `json:"ids_not_kept"` // ids past the 4096 kept per block
	seen      map[game.ObjectID]bool
}

// Death is what one client saw around a ship's ObjectExploding event: the
// messages after it, with millisecond offsets.
type Death struct {
	Object game.ObjectID `json:"object"`
	Client string        `json:"client"`
	Frame  int           `json:"frame"`
	Steps  []DeathStep   `json:"sequence"`
	until  time.Time
	at     time.Time
}

// DeathStep is one message of a death sequence.
type DeathStep struct {
	OffsetMS float64 `json:"offset_ms"`
	Dir      string  `json:"dir"`
	Message  string  `json:"message"`
}

// Measures are one capture's measures.
type Measures struct {
	Lanes []*Lane `json:"lanes"`
	// LanesDropped counts updates of lanes past the 8192 kept.
	LanesDropped int       `json:"lanes_dropped"`
	Cadence      []Cadence `json:"cadence"`
	// FlagFamilies counts StateUpdates by direction and family.
	FlagFamilies map[string]map[string]int `json:"flag_families"`
	// SubsystemBytes is, per direction, how often each byte value occurs
	// in the subsystem blocks (the states after the start index) of
	// StateUpdates carrying 0x20.
	SubsystemBytes [2]ByteHistogram `json:"subsystem_bytes"`
	Relay          []*RelayRow      `json:"relay_matrix"`
	Bundling       [2]Bundling      `json:"messages_per_datagram"`
	ObjectIDs      []*IDRange       `json:"object_ids"`
	Deaths         []*Death         `json:"deaths"`
}

// ByteHistogram counts the byte values of subsystem blocks. Blocks that
// follow a packed bit (flags 0x01 or 0x40 set) do not start on a byte
// boundary and are counted in Unaligned only.
type ByteHistogram struct {
	Dir       string   `json:"dir"`
	Blocks    int      `json:"blocks"`
	Unaligned int      `json:"unaligned_blocks"`
	Bytes     int      `json:"bytes"`
	Counts    [256]int `json:"counts"` // index: byte value
}

// Share is the share of byte value v among the bytes counted.
func (h *ByteHistogram) Share(v byte) float64 {
	if h.Bytes == 0 {
		return 0
	}
	return float64(h.Counts[v]) / float64(h.Bytes)
}

// CadenceOf returns the pooled cadence of a direction and family (nil when
// none).
func (m *Measures) CadenceOf(dir, family string) *Cadence {
	for i := range m.Cadence {
		if c := &m.Cadence[i]; c.Dir == dir && c.Family == family {
			return c
		}
	}
	return nil
}

// sortLanes orders lanes by direction, object, family.
func sortLanes(ls []*Lane) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Family < b.Family
	})
}
