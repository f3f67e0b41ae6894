// Package diff compares two captures of Bridge Commander servers, ours and
// a stock dedicated server's, and says where ours behaves differently on the
// wire, most severe first.
//
// A Builder turns one capture's flow records into a Capture: its sessions
// in join order, each with the join steps (the client messages that drive
// the join - connect, every checksum response, NewPlayerInGame,
// disconnect - and the server's answer to each, with the datagrams, flags
// and sequence numbers it travelled with), traffic counts per
// session-minute, StateUpdate flag use, relaying, and the findings of the
// per-side protocol checks (StateUpdate flags by direction, ACK flags,
// messages never ACKed, sequence numbering, non-stock framings, replication
// to late joiners).
//
// Compare matches the sessions of two Captures by join order and returns
// the Differences, each with a Phase, a Severity, a kind, both sides'
// decoded messages and the frame numbers to look them up. Differences in
// aggregate traffic (rates, relaying, keepalive cadence, retransmissions)
// are normalised per session-minute, so captures of different lengths and
// player counts compare.
//
// Rules hold the tolerances: fields that legitimately differ (game time,
// addresses, player names, ship state at replication, scores), object ids
// compared by their offset within the owner's slot block, timing and rate
// thresholds. DefaultRules gives them, LoadRules reads changes from a JSON
// file, and CompareGame / CompareControl compare two decoded messages under
// them - the part other tools (a replay verifier) reuse.
package diff

import "encoding/json"

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
