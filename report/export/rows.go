package export

import (
	"net/netip"
	"time"
	"unsafe"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
)

// MessageRow is one row of the messages table: a transport message, a
// GameSpy datagram or a damaged record, with the column names that
// `decode --json` uses. Columns that do not apply are null.
type MessageRow struct {
	File  string    `parquet:"file,dict"`
	Frame int64     `parquet:"frame"`
	Time  time.Time `parquet:"time,timestamp(microsecond)"`
	// Kind is "message", "gamespy" or "damaged".
	Kind     string `parquet:"kind,dict"`
	Server   string `parquet:"server,dict"`
	Client   string `parquet:"client,dict"`
	Src      string `parquet:"src,dict"`
	Dst      string `parquet:"dst,dict"`
	Dir      string `parquet:"dir,dict"`
	Peer     *int32 `parquet:"peer,optional"`
	Msg      *int32 `parquet:"msg,optional"`
	Type     *int32 `parquet:"type,optional"`
	TypeName string `parquet:"type_name,dict"`
	Reliable *bool  `parquet:"reliable,optional"`
	Seq      *int32 `parquet:"seq,optional"`
	// Opcode and Name are set for complete game messages (a fragmented
	// message on its last fragment).
	Opcode *int32  `parquet:"opcode,optional"`
	Name   *string `parquet:"name,optional,dict"`
	// Fields is the decoded message as decode --json's "fields" (or
	// "control", or "gamespy") object, as JSON text.
	Fields *string `parquet:"fields,optional"`
	// The common StateUpdate fields, typed.
	Object   *int64   `parquet:"object,optional"`
	GameTime *float32 `parquet:"game_time,optional"`
	Flags    *int32   `parquet:"flags,optional"`
	PosX     *float32 `parquet:"pos_x,optional"`
	PosY     *float32 `parquet:"pos_y,optional"`
	PosZ     *float32 `parquet:"pos_z,optional"`
	Speed    *float32 `parquet:"speed,optional"`
	Warning  *string  `parquet:"warning,optional"`
	Error    *string  `parquet:"error,optional"`
	// NonStock is the registry name of a message that is intact but not
	// in stock's form (dissect.Forms; "unknown" when no form fits).
	NonStock *string `parquet:"nonstock,optional"`

	// v holds the values the optional columns point to, so that filling
	// a row in place allocates nothing for them (parquet-go skips
	// unexported fields).
	v struct {
		peer, msg, typ, seq, opcode, flags int32
		reliable                           bool
		object                             int64
		gameTime, x, y, z, speed           float32
		name, fields, warning, err         string
		nonStock                           string
	}
	// text is the Writer's block for the fields column's text, when the
	// row is one of its tables' (NextMessage); see setFields.
	text *[]byte
}

// dirName is decode --json's "dir".
func dirName(d game.Direction) string {
	switch d {
	case game.ClientToServer:
		return "C->S"
	case game.ServerToClient:
		return "S->C"
	}
	return "?"
}

// Rows turns records into MessageRows, keeping the text of the addresses
// it has seen (a capture has few) so that a row costs no formatting.
type Rows struct {
	addrs   map[netip.AddrPort]string
	types   [256]string
	opcodes [256]string
	// text is where the fields column's JSON text is written, row after
	// row; see setFields.
	text []byte
}

// textChunk is the size of the blocks the fields text is written into; a
// new block is started when less than textReserve is left (a row's text
// that does not fit gets an array of its own from append).
const (
	textChunk   = 256 << 10
	textReserve = 4 << 10
)

func (rs *Rows) addr(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	s, ok := rs.addrs[a]
	if !ok {
		if rs.addrs == nil || len(rs.addrs) > 4096 { // bounded
			rs.addrs = map[netip.AddrPort]string{}
		}
		s = a.String()
		rs.addrs[a] = s
	}
	return s
}

// MessageRowOf fills row, a row in place in the table (Writer.NextMessage),
// from r, read from file.
func (rs *Rows) MessageRowOf(row *MessageRow, file string, r *flow.Record) {
	*row = MessageRow{File: file, Frame: int64(r.Frame), Time: r.Time.UTC(),
		Server: rs.addr(r.Server), Client: rs.addr(r.Client), Src: rs.addr(r.Src), Dst: rs.addr(r.Dst),
		Dir: dirName(r.Dir), text: row.text}
	v := &row.v
	if r.Warning != "" {
		v.warning, row.Warning = r.Warning, &v.warning
	}
	if r.Err != nil {
		v.err, row.Error = r.Err.Error(), &v.err
	}
	if r.NonStock != nil {
		v.nonStock, row.NonStock = r.NonStock.Name(), &v.nonStock
	}
	switch r.Kind {
	case flow.KindGameSpy:
		row.Kind = "gamespy"
		if r.GameSpy != nil {
			rs.setFields(row, r.GameSpy)
		}
		return
	case flow.KindDamaged:
		row.Kind = "damaged"
		v.peer, v.msg = int32(r.Peer), int32(r.MsgIndex)
		row.Peer, row.Msg = &v.peer, &v.msg
		return
	}
	row.Kind = "message"
	m := r.Msg
	v.peer, v.msg, v.typ = int32(r.Peer), int32(r.MsgIndex), int32(m.Type)
	row.Peer, row.Msg, row.Type = &v.peer, &v.msg, &v.typ
	row.TypeName = rs.transportName(m.Type)
	if m.Type == dissect.TypeAck || m.Reliable {
		v.seq, row.Seq = int32(m.Seq), &v.seq
	}
	if m.Type != dissect.TypeAck {
		v.reliable, row.Reliable = m.Reliable, &v.reliable
	}
	switch {
	case r.Game != nil:
		g := r.Game.Msg
		op := g.Opcode()
		v.opcode, v.name = int32(op), rs.opcodeName(op)
		row.Opcode, row.Name = &v.opcode, &v.name
		rs.setFields(row, g)
		if su, ok := g.(*game.StateUpdate); ok {
			stateColumns(row, su)
		}
	case r.Control != nil:
		rs.setFields(row, r.Control)
	}
}

// setFields sets the fields column to value's JSON form. The text is
// appended to a block and the row's string points into it, which saves a
// string allocation and copy per row (a tenth of export's time). A row of
// a Writer's table uses the Writer's block, which the Writer empties for
// reuse only after writing every row that points into it (NextMessage);
// other rows use a block of rs's own, never written again: the garbage
// collector frees it when the last row that points into it is gone.
func (rs *Rows) setFields(row *MessageRow, value any) {
	if row.text != nil {
		start := len(*row.text)
		*row.text = report.AppendValueJSON(*row.text, value)
		text := (*row.text)[start:]
		row.v.fields, row.Fields = unsafe.String(unsafe.SliceData(text), len(text)), &row.v.fields
		return
	}
	if cap(rs.text) < textReserve {
		rs.text = make([]byte, 0, textChunk)
	}
	text := report.AppendValueJSON(rs.text, value)
	rs.text = text[len(text):]
	row.v.fields, row.Fields = unsafe.String(unsafe.SliceData(text), len(text)), &row.v.fields
}

// transportName and opcodeName are the names of a transport type and an
// opcode, made once each.
func (rs *Rows) transportName(t dissect.TransportType) string {
	if rs.types[t] == "" {
		rs.types[t] = t.String()
	}
	return rs.types[t]
}

func (rs *Rows) opcodeName(op game.Opcode) string {
	if rs.opcodes[op] == "" {
		rs.opcodes[op] = op.String()
	}
	return rs.opcodes[op]
}

// stateColumns sets the typed StateUpdate columns.
func stateColumns(row *MessageRow, su *game.StateUpdate) {
	v := &row.v
	v.object, v.gameTime, v.flags = int64(su.Object), su.GameTime, int32(su.Flags)
	row.Object, row.GameTime, row.Flags = &v.object, &v.gameTime, &v.flags
	if su.Flags&game.StatePosition != 0 {
		v.x, v.y, v.z = su.Position.X, su.Position.Y, su.Position.Z
		row.PosX, row.PosY, row.PosZ = &v.x, &v.y, &v.z
	}
	if su.Flags&game.StateSpeed != 0 {
		v.speed, row.Speed = su.Speed.Float(), &v.speed
	}
}

// SessionRow is one row of the sessions table: the timeline's phases and
// the statistics' figures of one session.
type SessionRow struct {
	File      string     `parquet:"file,dict"`
	Server    string     `parquet:"server,dict"`
	Client    string     `parquet:"client,dict"`
	Slot      int32      `parquet:"slot"`
	Name      string     `parquet:"name"`
	Team      int32      `parquet:"team"`
	Ship      string     `parquet:"ship,dict"`
	Start     time.Time  `parquet:"start,timestamp(microsecond)"`
	End       time.Time  `parquet:"end,timestamp(microsecond)"`
	Duration  float64    `parquet:"duration_s"`
	Reached   string     `parquet:"reached,dict"`
	EndReason string     `parquet:"end_reason,dict"`
	MidCap    bool       `parquet:"mid_capture"`
	Connect   *time.Time `parquet:"connect,optional,timestamp(microsecond)"`
	Lobby     *time.Time `parquet:"lobby,optional,timestamp(microsecond)"`
	InGame    *time.Time `parquet:"in_game,optional,timestamp(microsecond)"`
	// Join is the seconds from connect to lobby (the checksum exchange
	// included), when both were seen.
	Join           *float64 `parquet:"join_s,optional"`
	Kills          int32    `parquet:"kills"`
	Deaths         int32    `parquet:"deaths"`
	Score          int32    `parquet:"score"`
	ShipsCreated   int32    `parquet:"ships_created"`
	ShipsDestroyed int32    `parquet:"ships_destroyed"`
	Chat           int32    `parquet:"chat_lines"`
	DatagramsC2S   int64    `parquet:"datagrams_c2s"`
	DatagramsS2C   int64    `parquet:"datagrams_s2c"`
	MessagesC2S    int64    `parquet:"game_messages_c2s"`
	MessagesS2C    int64    `parquet:"game_messages_s2c"`
	StateUpdateC2S int64    `parquet:"state_updates_c2s"`
	StateUpdateS2C int64    `parquet:"state_updates_s2c"`
	Retransmitted  int64    `parquet:"retransmitted"`
	Damaged        int64    `parquet:"damaged"`
}

// SessionRowOf fills row from s, read from file.
func SessionRowOf(row *SessionRow, file string, s *session.Session) {
	end := s.LastSeen
	if s.Phases.End != nil {
		end = *s.Phases.End
	}
	*row = SessionRow{File: file, Server: s.Server.String(), Client: s.Client.String(), Slot: int32(s.Slot),
		Name: s.Name, Team: int32(s.Team), Ship: s.Ship, Start: s.Start.UTC(), End: end.UTC(),
		Duration: s.Duration().Seconds(), Reached: s.Reached.String(), EndReason: string(s.EndReason),
		MidCap: s.MidCapture, Connect: s.Phases.Connect, Lobby: s.Phases.Lobby, InGame: s.Phases.InGame,
		Kills: s.Score.Kills, Deaths: s.Score.Deaths, Score: s.Score.Score,
		ShipsCreated: int32(s.ShipsCreated), ShipsDestroyed: int32(s.ShipsDestroyed), Chat: int32(len(s.Chat) + s.ChatDropped),
		Damaged: int64(s.Damaged)}
	if s.Phases.Connect != nil && s.Phases.Lobby != nil {
		join := s.Phases.Lobby.Sub(*s.Phases.Connect).Seconds()
		row.Join = &join
	}
	t := &s.Traffic
	for d := 0; d < 2; d++ {
		var msgs int64
		for op := range t.Opcodes[d] {
			msgs += int64(t.Opcodes[d][op].Count)
		}
		su := int64(t.Opcodes[d][game.OpStateUpdate].Count)
		if d == 0 {
			row.DatagramsC2S, row.MessagesC2S, row.StateUpdateC2S = int64(t.Datagrams[d]), msgs, su
		} else {
			row.DatagramsS2C, row.MessagesS2C, row.StateUpdateS2C = int64(t.Datagrams[d]), msgs, su
		}
	}
	rel := &s.Reliability
	row.Retransmitted = int64(rel.ClientToServer.Data.Retransmissions + rel.ClientToServer.Control.Retransmissions +
		rel.ServerToClient.Data.Retransmissions + rel.ServerToClient.Control.Retransmissions)
}
