package stock

import "github.com/bcwire/bcwire/dissect/game"

// Route is what the stock host does with a game message that a client in
// the game sent it. The native server (server/native) and the capture
// generator (server/synth) both follow HostRoute, so they cannot disagree.
type Route uint8

const (
	// RouteRelay: forwarded unchanged to every other client in the game
	// (OpenBC docs/wire-formats/objcreate-wire-format/09-host-relay-behavior.md
	// for ObjCreate; the same for weapons, chat, events).
	RouteRelay Route = iota
	// RouteTeam: forwarded to the sender's team only (team chat).
	RouteTeam
	// RouteKeep: the host keeps it. StateUpdate (0x1C) and
	// CollisionEffect (0x15) because the host sends its own StateUpdates
	// and applies collision damage itself; PythonEvent2 (0x0D) and HostMsg
	// (0x13), which the stock trace shows client to server only; the join
	// messages ChecksumResponse (0x21) and NewPlayerInGame (0x2A).
	RouteKeep
	// RouteAnswer: the host answers the sender itself and relays nothing:
	// ObjNotFound (0x1D) and RequestObject (0x1E) go client to host only,
	// and the host answers with the object's ObjCreate/ObjCreateTeam
	// (OpenBC docs/wire-formats/objnotfound-requestobj-wire-format.md).
	RouteAnswer
)

func (r Route) String() string {
	switch r {
	case RouteRelay:
		return "relay"
	case RouteTeam:
		return "team"
	case RouteKeep:
		return "keep"
	case RouteAnswer:
		return "answer"
	}
	return "?"
}

// HostRoute is the stock host's route for a game message with opcode op
// from a client in the game.
func HostRoute(op game.Opcode) Route {
	switch op {
	case game.OpStateUpdate, game.OpCollisionEffect, game.OpPythonEvent2, game.OpHostMsg,
		game.OpChecksumResponse, game.OpNewPlayerInGame:
		return RouteKeep
	case game.OpObjNotFound, game.OpRequestObject:
		return RouteAnswer
	case game.OpTeamChat:
		return RouteTeam
	}
	return RouteRelay
}
