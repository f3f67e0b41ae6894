// This file holds what tunes a Tracker (Options and the default caps) and
// what it counts (Stats).

package flow

import "net/netip"

// Options tune a Tracker. The zero value is usable.
type Options struct {
	// Servers forces these endpoints to be treated as servers. Without it,
	// servers are found from the traffic: an endpoint that sends datagrams
	// with peer id 0x01, answers GameSpy queries, or uses port 22101.
	Servers []netip.AddrPort
	// MaxFragmentSets and MaxFragmentBytes cap unfinished reassembly; the
	// oldest set is evicted (and reported) first. Defaults 1024 and 4 MiB.
	MaxFragmentSets  int
	MaxFragmentBytes int
	// MaxFlows caps the client/server flows followed at once (default
	// 16384) and MaxServers the servers known at once, each with its game
	// decoder (default 1024); beyond them the oldest is forgotten and
	// counted. Forced servers are never forgotten.
	MaxFlows   int
	MaxServers int
}

// Default caps.
const (
	DefaultMaxFragmentSets  = 1024
	DefaultMaxFragmentBytes = 4 << 20
	DefaultMaxFlows         = 16384
	DefaultMaxServers       = 1024
)

// Stats counts what a Tracker saw.
type Stats struct {
	Datagrams        int // BC datagrams decoded
	GameSpy          int
	OtherUDP         int // UDP datagrams in flows not recognised as Bridge Commander
	Messages         int
	GameMessages     int
	Damaged          int // datagrams with a framing error
	GameErrors       int // game messages that fit no stock layout (non-stock, not damage)
	NonStock         int // messages marked non-stock (known forms and unknown)
	Warnings         int
	Reassembled      int // fragmented game messages completed
	DuplicateFrags   int
	FragmentsEvicted int // unfinished sets dropped to honour the caps
	FragmentsLost    int // sets never completed (reported by Finish)
	FlowsEvicted     int // flows forgotten to honour MaxFlows
	ServersEvicted   int // servers forgotten to honour MaxServers
	Servers          int
	Flows            int
}
