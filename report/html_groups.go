package report

// Opcode groups, the colors the charts give them and phases, and the
// fixed-size table of message rates per group.

import (
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

// Group is a family of messages that the rate chart and the opcode table
// color alike.
type Group uint8

const (
	GroupStateUpdate Group = iota // StateUpdate 0x1C
	GroupCombat                   // objects, weapons, Python events, explosions, scores
	GroupJoin                     // settings, checksums, file transfer, new player, mission init
	GroupScript                   // chat, host and team messages, other script messages
	GroupControl                  // transport messages other than data: ACKs, keepalives, connects
	GroupOther                    // opcodes nobody knows
	numGroups
)

var groupInfo = [numGroups]struct{ name, color string }{
	{"StateUpdate", "#4e79a7"},
	{"Events & combat", "#e15759"},
	{"Checksum & join", "#f28e2b"},
	{"Script & chat", "#59a14f"},
	{"Control & ACK", "#9d9da0"},
	{"Other", "#b07aa1"},
}

func (g Group) String() string { return groupInfo[g].name }

// Color is the group's color in every chart and table.
func (g Group) Color() string { return groupInfo[g].color }

// OpcodeGroup says which group a game opcode belongs to.
func OpcodeGroup(op game.Opcode) Group {
	switch op {
	case game.OpStateUpdate:
		return GroupStateUpdate
	case game.OpSettings, game.OpGameInit, game.OpDeletePlayerUI, game.OpDeletePlayerAnim,
		game.OpChecksumRequest, game.OpChecksumResponse, game.OpVersionMismatch, game.OpSystemChecksumFail,
		game.OpFileTransfer, game.OpFileTransferACK, game.OpChecksumComplete, game.OpNewPlayerInGame,
		game.OpMissionInit:
		return GroupJoin
	case game.OpHostMsg, game.OpChat, game.OpTeamChat, game.OpTeamMessage:
		return GroupScript
	case game.OpScoreChange, game.OpScore, game.OpEndGame, game.OpRestartGame, game.OpScoreInit, game.OpTeamScore:
		return GroupCombat
	case game.OpUnused24, game.OpUnused26:
		return GroupOther
	}
	switch {
	case op.IsScript():
		return GroupScript
	case op < game.MaxMessageTypes:
		return GroupCombat
	}
	return GroupOther
}

// Phase and direction colors.
var (
	phaseColor = map[session.Phase]string{
		session.PhaseUnknown: "#c9c9cc", session.PhaseConnecting: "#76b7b2", session.PhaseChecksum: "#f28e2b",
		session.PhaseLobby: "#edc948", session.PhaseInGame: "#59a14f",
	}
	phaseLabel = map[session.Phase]string{
		session.PhaseUnknown: "before the capture", session.PhaseConnecting: "connecting",
		session.PhaseChecksum: "checksum", session.PhaseLobby: "lobby", session.PhaseInGame: "in game",
	}
	dirColor = [2]string{"#3b6ea5", "#d37295"} // C->S, S->C
)

// rateBuckets is how many time buckets the rate chart has. Their width
// starts at baseBucket and doubles whenever the capture outgrows them, so
// memory stays fixed however long the capture is.
const (
	rateBuckets = 240
	baseBucket  = 250 * time.Millisecond
)

// rates counts messages per time bucket and group.
type rates struct {
	origin  time.Time
	width   time.Duration
	used    int // buckets[:used] may hold counts
	buckets [rateBuckets][numGroups]int
}

func (r *rates) add(t time.Time, g Group) {
	if t.IsZero() {
		return
	}
	r.buckets[r.index(t)][g]++
}

func (r *rates) index(t time.Time) int {
	if r.width == 0 {
		r.origin, r.width = t.Truncate(time.Second), baseBucket
	}
	for {
		if t.Before(r.origin) {
			// An earlier time (a second file): move the counts right.
			k := int((r.origin.Sub(t) + r.width - 1) / r.width)
			if r.used+k > rateBuckets {
				r.widen()
				continue
			}
			copy(r.buckets[k:], r.buckets[:r.used])
			clear(r.buckets[:k])
			r.origin = r.origin.Add(-time.Duration(k) * r.width)
			r.used += k
			continue
		}
		i := int(t.Sub(r.origin) / r.width)
		if i < rateBuckets {
			r.used = max(r.used, i+1)
			return i
		}
		r.widen()
	}
}

// widen doubles the bucket width, merging neighbours.
func (r *rates) widen() {
	for i := range rateBuckets / 2 {
		for g := range numGroups {
			r.buckets[i][g] = r.buckets[2*i][g] + r.buckets[2*i+1][g]
		}
	}
	clear(r.buckets[rateBuckets/2:])
	r.width *= 2
	r.used = (r.used + 1) / 2
}
