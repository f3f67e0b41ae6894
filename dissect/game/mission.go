package game

// The scoring and game-flow script messages every stock mission shares
// (MissionShared): MISSION_INIT, SCORE_CHANGE, SCORE, END_GAME and
// RESTART_GAME. The host writes them from Python with the stream's plain
// byte/int writers (no packed bits); player ids are network ids (the wire
// peer id: host 1, clients 2 and up), 0 meaning no player.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcwire/bcwire/dissect"
)

// NoLimit is the MissionInit byte for "no time limit" / "no frag limit".
const NoLimit = 0xFF

// MissionInit (0x35, MISSION_INIT_MESSAGE) gives a joining player the match
// settings; the host sends it in answer to NewPlayerInGame (0x2A).
type MissionInit struct {
	// PlayerLimit is the host's player limit. (One OpenBC page calls this
	// byte the current player count; the stock bytes `35 08 …` from one- and
	// three-player sessions say it is the limit, 8.)
	PlayerLimit uint8 `json:"player_limit"`
	// System is the star system (map) index.
	System uint8 `json:"system"`
	// TimeLimit is the time limit in minutes, or NoLimit.
	TimeLimit uint8 `json:"time_limit"`
	// EndTime is the game-clock second at which the match ends. It is on
	// the wire only when TimeLimit is not NoLimit.
	EndTime int32 `json:"end_time,omitempty"`
	// FragLimit is the kill (or score) limit, or NoLimit.
	FragLimit uint8 `json:"frag_limit"`
}

func init() { register(OpMissionInit, func() Message { return new(MissionInit) }) }

func (m *MissionInit) Opcode() Opcode { return OpMissionInit }

func (m *MissionInit) decode(r *dissect.Reader, _ *Context) {
	m.PlayerLimit = r.U8("player limit")
	m.System = r.U8("system")
	m.TimeLimit = r.U8("time limit")
	m.EndTime = 0
	if m.TimeLimit != NoLimit {
		m.EndTime = r.I32("end time")
	}
	m.FragLimit = r.U8("frag limit")
}

func (m *MissionInit) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpMissionInit)))
	w.U8(m.PlayerLimit)
	w.U8(m.System)
	w.U8(m.TimeLimit)
	if m.TimeLimit != NoLimit {
		w.I32(m.EndTime)
	}
	w.U8(m.FragLimit)
	return w.Bytes()
}

func (m *MissionInit) String() string {
	s := fmt.Sprintf("players=%d system=%d time=%s", m.PlayerLimit, m.System, limitString(m.TimeLimit))
	if m.TimeLimit != NoLimit {
		s += fmt.Sprintf(" end=%d", m.EndTime)
	}
	return s + " frags=" + limitString(m.FragLimit)
}

func limitString(v uint8) string {
	if v == NoLimit {
		return "none"
	}
	return strconv.Itoa(int(v))
}

// ScoreChange (0x36, SCORE_CHANGE_MESSAGE) reports a kill: the killer's new
// kill count and score (absent when KillerID is 0: self-destruct or the
// environment), the victim's new death count, and the new scores of any
// other players who damaged the victim.
type ScoreChange struct {
	KillerID     int32         `json:"killer_id"`
	KillerKills  int32         `json:"killer_kills,omitempty"` // only when KillerID != 0
	KillerScore  int32         `json:"killer_score,omitempty"` // only when KillerID != 0
	VictimID     int32         `json:"victim_id"`
	VictimDeaths int32         `json:"victim_deaths"`
	Others       []PlayerScore `json:"others"` // u8 count, then the entries
}

// PlayerScore is one player's updated score in a ScoreChange.
type PlayerScore struct {
	PlayerID int32 `json:"player_id"`
	Score    int32 `json:"score"`
}

func init() { register(OpScoreChange, func() Message { return new(ScoreChange) }) }

func (m *ScoreChange) Opcode() Opcode { return OpScoreChange }

func (m *ScoreChange) decode(r *dissect.Reader, _ *Context) {
	m.KillerID = r.I32("killer id")
	m.KillerKills, m.KillerScore = 0, 0
	if m.KillerID != 0 {
		m.KillerKills = r.I32("killer kills")
		m.KillerScore = r.I32("killer score")
	}
	m.VictimID = r.I32("victim id")
	m.VictimDeaths = r.I32("victim deaths")
	n := int(r.U8("score update count"))
	m.Others = m.Others[:0]
	if r.Err() == nil && r.Len() < n*8 {
		r.Fail("score updates", dissect.ErrShort)
		return
	}
	for i := 0; i < n; i++ {
		id := r.I32("player id")
		m.Others = append(m.Others, PlayerScore{PlayerID: id, Score: r.I32("player score")})
	}
}

// Append encodes m; at most 255 entries of Others fit the count byte.
func (m *ScoreChange) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpScoreChange)))
	w.I32(m.KillerID)
	if m.KillerID != 0 {
		w.I32(m.KillerKills)
		w.I32(m.KillerScore)
	}
	w.I32(m.VictimID)
	w.I32(m.VictimDeaths)
	others := m.Others
	if len(others) > 0xFF {
		others = others[:0xFF]
	}
	w.U8(uint8(len(others)))
	for _, o := range others {
		w.I32(o.PlayerID)
		w.I32(o.Score)
	}
	return w.Bytes()
}

func (m *ScoreChange) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "killer=%d", m.KillerID)
	if m.KillerID != 0 {
		fmt.Fprintf(&sb, " kills=%d score=%d", m.KillerKills, m.KillerScore)
	}
	fmt.Fprintf(&sb, " victim=%d deaths=%d others=%d[", m.VictimID, m.VictimDeaths, len(m.Others))
	for i, o := range m.Others {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%d:%d", o.PlayerID, o.Score)
	}
	sb.WriteByte(']')
	return sb.String()
}

// Score (0x37, SCORE_MESSAGE) is one player's totals, sent to a joining
// player once per player already in a free-for-all match.
type Score struct {
	PlayerID int32 `json:"player_id"`
	Kills    int32 `json:"kills"`
	Deaths   int32 `json:"deaths"`
	Score    int32 `json:"score"`
}

func init() { register(OpScore, func() Message { return new(Score) }) }

func (m *Score) Opcode() Opcode { return OpScore }

func (m *Score) decode(r *dissect.Reader, _ *Context) {
	m.PlayerID = r.I32("player id")
	m.Kills = r.I32("kills")
	m.Deaths = r.I32("deaths")
	m.Score = r.I32("score")
}

func (m *Score) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpScore)))
	w.I32(m.PlayerID)
	w.I32(m.Kills)
	w.I32(m.Deaths)
	w.I32(m.Score)
	return w.Bytes()
}

func (m *Score) String() string {
	return fmt.Sprintf("player=%d kills=%d deaths=%d score=%d", m.PlayerID, m.Kills, m.Deaths, m.Score)
}

// EndReason is why a match ended (END_GAME_MESSAGE).
type EndReason int32

// The stock end reasons. The last three belong to objective missions (the
// Borg and Enterprise ones to cut content).
const (
	EndOver           EndReason = 0
	EndTimeUp         EndReason = 1
	EndFragLimit      EndReason = 2
	EndScoreLimit     EndReason = 3
	EndStarbaseDead   EndReason = 4
	EndBorgDead       EndReason = 5
	EndEnterpriseDead EndReason = 6
)

var endReasonNames = [...]string{"OVER", "TIME_UP", "FRAG_LIMIT", "SCORE_LIMIT",
	"STARBASE_DEAD", "BORG_DEAD", "ENTERPRISE_DEAD"}

func (e EndReason) String() string {
	if e >= 0 && int(e) < len(endReasonNames) {
		return endReasonNames[e]
	}
	return fmt.Sprintf("reason(%d)", int32(e))
}

// EndGame (0x38, END_GAME_MESSAGE) ends the match for everyone.
type EndGame struct {
	Reason EndReason `json:"reason"`
}

func init() { register(OpEndGame, func() Message { return new(EndGame) }) }

func (m *EndGame) Opcode() Opcode { return OpEndGame }

func (m *EndGame) decode(r *dissect.Reader, _ *Context) { m.Reason = EndReason(r.I32("reason")) }

func (m *EndGame) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpEndGame)))
	w.I32(int32(m.Reason))
	return w.Bytes()
}

func (m *EndGame) String() string { return fmt.Sprintf("reason=%s", m.Reason) }

func (m *EndGame) warning() string {
	if m.Reason < EndOver || m.Reason > EndEnterpriseDead {
		return "END_GAME reason is outside the stock codes 0-6"
	}
	return ""
}

// RestartGame (0x39, RESTART_GAME_MESSAGE) restarts the match: scores are
// zeroed, ships removed and everyone returns to ship selection. It has no
// fields.
type RestartGame struct{}

func init() { register(OpRestartGame, func() Message { return new(RestartGame) }) }

func (m *RestartGame) Opcode() Opcode                   { return OpRestartGame }
func (m *RestartGame) decode(*dissect.Reader, *Context) {}
func (m *RestartGame) Append(b []byte) []byte           { return append(b, byte(OpRestartGame)) }
func (m *RestartGame) String() string                   { return "" }
