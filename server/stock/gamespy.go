package stock

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// DefaultSystem is the star system script name GameSpy replies give when
// none is configured: Multi1, the first of the stock multiplayer systems.
const DefaultSystem = "Multi1"

// GameSpy game modes: a server whose game is running reports
// GameModePlaying, one in its settings lobby GameModeSettings.
const (
	GameModePlaying  = "openplaying"
	GameModeSettings = "settings"
)

// ServerInfo is what GameSpy replies report.
type ServerInfo struct {
	Hostname      string // without the '*' a password adds
	Location      int    // region code, 0
	MissionScript string // DefaultMap when empty
	MapName       string // display name, DefaultMapName when empty
	NumPlayers    int
	MaxPlayers    int
	GameMode      string // GameModePlaying or GameModeSettings (when empty)
	TimeLimit     int    // minutes; negative: none (sent as -1)
	FragLimit     int    // kills; negative: none (sent as -2)
	System        string // star system script name, DefaultSystem when empty
	Password      bool
	// Players are the connected players' names, sent as player_0, player_1
	// and so on.
	Players []string
	// HostPort is the server's game port. Stock's replies never name it
	// (a master takes the port the heartbeat named, and 22101 for a
	// state-change heartbeat's 0); a server on another port adds
	// \hostport\ so that a master that stores it from \status\ (as
	// 333networks' does) lists the real port. 0 or Port: not sent.
	HostPort uint16
}

// ServerInfo is the part of a GameSpy reply that m decides (mission
// script, map name, player limit, limits and system); the caller adds the
// host name, the players and the game mode.
func (m Match) ServerInfo() ServerInfo {
	m = m.withDefaults()
	return ServerInfo{MissionScript: m.Map, MapName: MapDisplayName(m.Map), MaxPlayers: m.MaxPlayers,
		TimeLimit: m.TimeLimit, FragLimit: m.FragLimit, System: m.SystemName}
}

// MapDisplayName is the last dotted part of a mission script
// (Multiplayer.Episode.Mission1.Mission1 is shown as Mission1).
func MapDisplayName(script string) string {
	if i := strings.LastIndexByte(script, '.'); i >= 0 {
		return script[i+1:]
	}
	return script
}

// GameSpyReply answers a plaintext GameSpy query of kind with the given
// queryid: GameSpyAnswer of a query that has the one word kind.
func GameSpyReply(kind string, info ServerInfo, queryID string) []byte {
	return GameSpyAnswer(&dissect.GameSpy{Query: true, Kind: kind, QueryID: queryID,
		Fields: []dissect.GameSpyField{{Key: kind}}}, info)
}

// GameSpyAnswer is the stock server's reply to the query q (a parsed
// query): one datagram that answers each of its words in order, then
// \final\ and \queryid\ with the query's own queryid, or "1.1" when it
// carries none (OpenBC docs/protocol/gamespy-protocol.md, "Response
// Termination").
//
// Fields and order follow that document, whose \status\ order was checked
// against a capture of the stock server:
//
//   - info: gamename (bcommander), gamever (60), location
//   - basic: hostname ('*' in front when a password is set),
//     missionscript, mapname, numplayers, maxplayers, gamemode
//   - rules: timelimit (-1: none), fraglimit (-2: none), system,
//     password (0 or 1)
//   - players: player_N for each player
//   - status: info, basic, rules and players, in that order
//   - echo: \echo\ with the query's text
//   - secure: info, then \validate\ with Validate of the challenge (the
//     master handshake's answer, "Wire Format" of section 4)
//
// Each group of fields is sent once however often the query asks for it,
// and so are \echo\ and \secure\: only the first of each is answered, its
// text cut to MaxGameSpyValue bytes (a master's challenge is 6), so the
// reply to any query is at most the longest \status\ plus about 200 bytes.
// packets, which BC does not use, is answered as basic. Backslashes, which
// would split a value into new fields, are dropped from values.
func GameSpyAnswer(q *dissect.GameSpy, info ServerInfo) []byte {
	if info.MissionScript == "" {
		info.MissionScript = DefaultMap
	}
	if info.MapName == "" {
		info.MapName = DefaultMapName
	}
	if info.GameMode == "" {
		info.GameMode = GameModeSettings
	}
	if info.System == "" {
		info.System = DefaultSystem
	}
	id := q.QueryID
	if id == "" {
		id = "1.1"
	}
	r := dissect.GameSpy{Final: true, QueryID: strings.ReplaceAll(id, `\`, "")}
	add := func(k, v string) {
		r.Fields = append(r.Fields, dissect.GameSpyField{Key: k, Value: strings.ReplaceAll(v, `\`, "")})
	}
	var sent [6]bool // info, basic, rules, players, echo, secure
	once := func(i int, fields func()) {
		if !sent[i] {
			sent[i] = true
			fields()
		}
	}
	infoFields := func() {
		add("gamename", "bcommander")
		add("gamever", "60")
		add("location", strconv.Itoa(info.Location))
	}
	basicFields := func() {
		host := info.Hostname
		if info.Password {
			host = "*" + host
		}
		add("hostname", host)
		add("missionscript", info.MissionScript)
		add("mapname", info.MapName)
		add("numplayers", strconv.Itoa(info.NumPlayers))
		add("maxplayers", strconv.Itoa(info.MaxPlayers))
		add("gamemode", info.GameMode)
		if info.HostPort != 0 && info.HostPort != Port {
			add("hostport", strconv.Itoa(int(info.HostPort)))
		}
	}
	rules := func() {
		tl, fl := info.TimeLimit, info.FragLimit
		if tl < 0 {
			tl = -1
		}
		if fl < 0 {
			fl = -2
		}
		pw := "0"
		if info.Password {
			pw = "1"
		}
		add("timelimit", strconv.Itoa(tl))
		add("fraglimit", strconv.Itoa(fl))
		add("system", info.System)
		add("password", pw)
	}
	players := func() {
		for i, n := range info.Players {
			add("player_"+strconv.Itoa(i), n)
		}
	}
	for _, f := range q.Fields {
		switch f.Key {
		case "info":
			once(0, infoFields)
		case "rules":
			once(2, rules)
		case "players":
			once(3, players)
		case "status":
			once(0, infoFields)
			once(1, basicFields)
			once(2, rules)
			once(3, players)
		case "echo":
			once(4, func() { add("echo", cut(f.Value)) })
		case "secure":
			once(0, infoFields)
			once(5, func() { add("validate", Validate(cut(f.Value), GameSpyKey)) })
		default:
			once(1, basicFields)
		}
	}
	return r.Append(nil)
}

// MaxGameSpyValue is the most of an \echo\ text or a \secure\ challenge
// that GameSpyAnswer uses; the rest is ignored.
const MaxGameSpyValue = 64

func cut(v string) string {
	if len(v) > MaxGameSpyValue {
		return v[:MaxGameSpyValue]
	}
	return v
}

// GameSpyKey is Bridge Commander's GameSpy secret key, with which the
// server answers a master's \secure\ challenge (OpenBC
// docs/protocol/gamespy-protocol.md, section 4).
const GameSpyKey = "Nm3aZ9"

// Validate is the answer to a GameSpy \secure\ challenge: the challenge
// run through RC4's key schedule (with key) and a modified stream step
// whose index advances by each challenge byte plus one, then base64 with
// the standard alphabet after padding to a multiple of three bytes with
// zeros (the "gsmsalg" of section 4 of OpenBC's GameSpy document). A
// challenge ends at its first NUL byte, as on the C side.
func Validate(challenge, key string) string {
	if i := strings.IndexByte(challenge, 0); i >= 0 {
		challenge = challenge[:i]
	}
	if key == "" {
		key = GameSpyKey
	}
	var st [256]byte
	for i := range st {
		st[i] = byte(i)
	}
	var j byte
	for i := 0; i < 256; i++ {
		j += st[i] + key[i%len(key)]
		st[i], st[j] = st[j], st[i]
	}
	out := make([]byte, len(challenge), len(challenge)+2)
	var a, b byte
	for n := 0; n < len(challenge); n++ {
		c := challenge[n]
		a += c + 1
		x := st[a]
		b += x
		y := st[b]
		st[b], st[a] = x, y
		out[n] = c ^ st[x+y]
	}
	for len(out)%3 != 0 {
		out = append(out, 0)
	}
	return base64.StdEncoding.EncodeToString(out)
}

// Heartbeat kinds: the master-server heartbeats a server sends (OpenBC
// docs/protocol/gamespy-protocol.md, "Heartbeat Protocol").
const (
	HeartbeatPlain       = iota // at startup and every HeartbeatInterval
	HeartbeatStateChange        // when the game state changes
	HeartbeatFinal              // when the server shuts down
)

// HeartbeatInterval is how often a registered server heartbeats.
const HeartbeatInterval = 60 * time.Second

// MasterPort is the GameSpy master server's heartbeat port.
const MasterPort = 27900

// Heartbeat is a heartbeat to a master server from a server whose game
// port is gamePort: \heartbeat\<port>\gamename\bcommander\, with
// statechanged\1 or final\ after it for those kinds. On the stock port the
// state-change heartbeat carries port 0, as the stock server's does on the
// wire (\heartbeat\0\gamename\bcommander\statechanged\1 in the stock
// loopback trace of OpenBC docs/network-flows/disconnect-flow.md, 7.3, and
// in stock-payloads-2.json). A master reads that 0 as the default port
// 22101 (333networks' Masterserver-Qt5 does), so a server on another port
// sends its real port: stock's form there would list a phantom server at
// 22101 that the server's own \validate\ then authenticates.
func Heartbeat(gamePort uint16, kind int) []byte {
	if kind == HeartbeatStateChange && gamePort == Port {
		gamePort = 0
	}
	b := append([]byte(`\heartbeat\`), strconv.Itoa(int(gamePort))...)
	b = append(b, `\gamename\bcommander\`...)
	switch kind {
	case HeartbeatStateChange:
		b = append(b, `statechanged\1`...)
	case HeartbeatFinal:
		b = append(b, `final\`...)
	}
	return b
}
