package game

// The team-mode script messages (team deathmatch missions): SCORE_INIT,
// TEAM_SCORE and TEAM. Layouts follow the stock mission scripts as the
// OpenBC gamemode notes describe them; no captured bytes of them are
// published.

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// NoTeam is the team byte of a player with no team yet.
const NoTeam = 0xFF

// ScoreInit (0x3F, SCORE_INIT_MESSAGE) is SCORE with the player's team: one
// per player, sent to a joining player in team modes.
type ScoreInit struct {
	PlayerID int32 `json:"player_id"`
	Kills    int32 `json:"kills"`
	Deaths   int32 `json:"deaths"`
	Score    int32 `json:"score"`
	Team     uint8 `json:"team"` // 0 or 1, NoTeam when unassigned
}

func init() { register(OpScoreInit, func() Message { return new(ScoreInit) }) }

func (m *ScoreInit) Opcode() Opcode { return OpScoreInit }

func (m *ScoreInit) decode(r *dissect.Reader, _ *Context) {
	m.PlayerID = r.I32("player id")
	m.Kills = r.I32("kills")
	m.Deaths = r.I32("deaths")
	m.Score = r.I32("score")
	m.Team = r.U8("team")
}

func (m *ScoreInit) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpScoreInit)))
	w.I32(m.PlayerID)
	w.I32(m.Kills)
	w.I32(m.Deaths)
	w.I32(m.Score)
	w.U8(m.Team)
	return w.Bytes()
}

func (m *ScoreInit) String() string {
	return fmt.Sprintf("player=%d kills=%d deaths=%d score=%d team=%s",
		m.PlayerID, m.Kills, m.Deaths, m.Score, teamString(m.Team))
}

func teamString(t uint8) string {
	if t == NoTeam {
		return "none"
	}
	return fmt.Sprint(t)
}

// TeamScore (0x40, TEAM_SCORE_MESSAGE) is one team's kill count and score,
// sent for each team to a joining player and to everyone after a kill.
type TeamScore struct {
	Team  uint8 `json:"team"`
	Kills int32 `json:"kills"`
	Score int32 `json:"score"`
}

func init() { register(OpTeamScore, func() Message { return new(TeamScore) }) }

func (m *TeamScore) Opcode() Opcode { return OpTeamScore }

func (m *TeamScore) decode(r *dissect.Reader, _ *Context) {
	m.Team = r.U8("team")
	m.Kills = r.I32("team kills")
	m.Score = r.I32("team score")
}

func (m *TeamScore) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpTeamScore)))
	w.U8(m.Team)
	w.I32(m.Kills)
	w.I32(m.Score)
	return w.Bytes()
}

func (m *TeamScore) String() string {
	return fmt.Sprintf("team=%s kills=%d score=%d", teamString(m.Team), m.Kills, m.Score)
}

// TeamMessage (0x41, TEAM_MESSAGE) assigns a player to a team: the client
// sends its choice to the host, which records it and forwards it to the
// other players.
type TeamMessage struct {
	PlayerID int32 `json:"player_id"`
	Team     uint8 `json:"team"`
}

func init() { register(OpTeamMessage, func() Message { return new(TeamMessage) }) }

func (m *TeamMessage) Opcode() Opcode { return OpTeamMessage }

func (m *TeamMessage) decode(r *dissect.Reader, _ *Context) {
	m.PlayerID = r.I32("player id")
	m.Team = r.U8("team")
}

func (m *TeamMessage) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpTeamMessage)))
	w.I32(m.PlayerID)
	w.U8(m.Team)
	return w.Bytes()
}

func (m *TeamMessage) String() string {
	return fmt.Sprintf("player=%d team=%s", m.PlayerID, teamString(m.Team))
}
