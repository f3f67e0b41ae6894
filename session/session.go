// Package session turns the records of package flow into player sessions:
// one per client flow on a server, with its join phases and their times,
// reliable-delivery statistics, chat, kills, ships, and traffic counts.
//
// A Builder consumes records in capture order and hands each Session to a
// callback as soon as it ends (disconnect, boot, or 45 s of silence), then
// forgets it, so memory grows with the sessions alive at once, never with
// the length of the capture. Every per-session list is capped, with a
// counter of what was dropped.
package session

import (
	"encoding/json"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Phase is how far a session got.
type Phase uint8

const (
	PhaseUnknown    Phase = iota // nothing but keepalives and ACKs seen
	PhaseConnecting              // connect request or slot assignment
	PhaseChecksum                // checksum rounds under way
	PhaseLobby                   // checksums passed: settings, ship selection
	PhaseInGame                  // ship selected, flying
)

var phaseNames = [...]string{"unknown", "connecting", "checksum", "lobby", "in_game"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "phase(?)"
}

// MarshalText writes the phase's name.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// EndReason says how a session ended.
type EndReason string

const (
	EndDisconnect EndReason = "disconnect" // a disconnect message (type 0x05)
	EndBoot       EndReason = "boot"       // the server booted the client (type 0x04)
	EndTimeout    EndReason = "timeout"    // no traffic for Options.Timeout of capture time
	EndReconnect  EndReason = "reconnect"  // the same client endpoint connected again
	EndOpen       EndReason = "open"       // still going when the capture ended
	EndEvicted    EndReason = "evicted"    // ended early to honour Options.MaxSessions
)

// Phases are the times a session reached each step of the join, in protocol
// order; nil when the capture does not show it. End is the last traffic of a
// timed-out session, the disconnect or boot message otherwise, and nil for a
// session still open when the capture ended.
type Phases struct {
	Connect          *time.Time `json:"connect"`            // client's connect request
	ConnectReply     *time.Time `json:"connect_reply"`      // server's slot assignment
	ChecksumDone     *time.Time `json:"checksum_done"`      // ChecksumComplete 0x28
	Lobby            *time.Time `json:"lobby"`              // Settings 0x00 (or GameInit 0x01)
	NewPlayer        *time.Time `json:"new_player"`         // NewPlayerInGame 0x2A
	MissionInit      *time.Time `json:"mission_init"`       // MISSION_INIT 0x35
	InGame           *time.Time `json:"in_game"`            // the client's first ObjCreateTeam 0x03: ship selected
	FirstStateUpdate *time.Time `json:"first_state_update"` // first StateUpdate 0x1C either way
	Destroyed        *time.Time `json:"destroyed"`          // the client's ship first destroyed
	Respawned        *time.Time `json:"respawned"`          // first new ship after that
	End              *time.Time `json:"end"`
}

// ChecksumRound is one round of the checksum exchange: the server's
// request and the client's response.
type ChecksumRound struct {
	Round    game.ChecksumRound `json:"round"`
	Request  *time.Time         `json:"request"`
	Response *time.Time         `json:"response"`
}

// RTT is the time from request to response, or 0 when either is missing.
func (c ChecksumRound) RTT() time.Duration {
	if c.Request == nil || c.Response == nil {
		return 0
	}
	return c.Response.Sub(*c.Request)
}

// MarshalJSON adds the round trip as rtt_ms (null when either side is
// missing).
func (c ChecksumRound) MarshalJSON() ([]byte, error) {
	var rtt *float64
	if c.Request != nil && c.Response != nil {
		v := ms(c.RTT())
		rtt = &v
	}
	return json.Marshal(struct {
		Round    game.ChecksumRound `json:"round"`
		Request  *time.Time         `json:"request"`
		Response *time.Time         `json:"response"`
		RTT      *float64           `json:"rtt_ms"`
	}{c.Round, c.Request, c.Response, rtt})
}

// Event is something notable in a session.
type Event struct {
	Time  time.Time `json:"time"`
	Frame int       `json:"frame"` // packet number, for `bcwire decode`
	Kind  string    `json:"kind"`  // one of the Event* constants
	Text  string    `json:"text"`
}

// Event kinds.
const (
	EventBoot            = "boot"
	EventDisconnect      = "disconnect"
	EventTimeout         = "timeout"
	EventReconnect       = "reconnect"
	EventChecksumFail    = "checksum_fail"
	EventRetransmitBurst = "retransmit_burst"
	EventShipCreated     = "ship_created"
	EventShipDestroyed   = "ship_destroyed"
	EventRespawn         = "respawn"
	EventKill            = "kill"
	EventEndGame         = "end_game"
	EventRestartGame     = "restart_game"
	EventDamaged         = "damaged"
	EventNonStock        = "non_stock" // traffic in a form stock never sends (a third-party client's or server's)
)

// ChatLine is one chat message.
type ChatLine struct {
	Time     time.Time `json:"time"`
	Frame    int       `json:"frame"`
	SenderID int32     `json:"sender_id"` // network id: 1 the host, 2 and up clients
	Sender   string    `json:"sender"`    // the sender's name when known
	Team     bool      `json:"team"`      // TEAM_CHAT (0x2D) rather than CHAT (0x2C)
	Text     string    `json:"text"`
}

// Score is a player's totals as the server last reported them.
type Score struct {
	Kills  int32 `json:"kills"`
	Deaths int32 `json:"deaths"`
	Score  int32 `json:"score"`
}

// Ship is an object the client's player created.
type Ship struct {
	ID        game.ObjectID `json:"id"`
	Class     string        `json:"class,omitempty"`
	Created   time.Time     `json:"created"`
	Destroyed *time.Time    `json:"destroyed"`
	// Subsystems sums up the ship's subsystem states as created
	// (game.ObjCreate.SubsystemSummary).
	Subsystems string `json:"subsystems,omitempty"`
}

// ShipRate is how often StateUpdates for one object went one way.
type ShipRate struct {
	Object game.ObjectID `json:"object"`
	Dir    string        `json:"dir"`
	Count  int           `json:"count"`
	First  time.Time     `json:"first"`
	Last   time.Time     `json:"last"`
	// PerSecond is the rate between the first and the last update.
	PerSecond float64 `json:"per_second"`
}

// Interval describes the spacing of periodic messages (keepalives).
type Interval struct {
	Count int
	Mean  time.Duration
	Min   time.Duration
	Max   time.Duration
	first time.Time
	last  time.Time
}

func (iv *Interval) add(t time.Time) {
	if iv.Count > 0 {
		gap := t.Sub(iv.last)
		if iv.Count == 1 || gap < iv.Min {
			iv.Min = gap
		}
		if gap > iv.Max {
			iv.Max = gap
		}
	} else {
		iv.first = t
	}
	iv.last = t
	iv.Count++
	if iv.Count > 1 {
		iv.Mean = iv.last.Sub(iv.first) / time.Duration(iv.Count-1)
	}
}

// MarshalJSON writes the times as milliseconds.
func (iv Interval) MarshalJSON() ([]byte, error) {
	if iv.Count < 2 {
		return json.Marshal(struct {
			Count int `json:"count"`
		}{iv.Count})
	}
	return json.Marshal(struct {
		Count int     `json:"count"`
		Mean  float64 `json:"mean_ms"`
		Min   float64 `json:"min_ms"`
		Max   float64 `json:"max_ms"`
	}{iv.Count, ms(iv.Mean), ms(iv.Min), ms(iv.Max)})
}

// Relay counts the client's game messages the server forwarded unchanged to
// other clients, and the forwarded copies this client received.
type Relay struct {
	Messages int `json:"messages"` // the client's messages forwarded at least once
	Copies   int `json:"copies"`   // copies forwarded to other clients
	// FanOut is the mean number of clients each relayed message went to.
	FanOut   float64 `json:"fan_out"`
	Received int     `json:"received"` // copies of other clients' messages sent to this client
}

// Session is one client's time on one server.
type Session struct {
	Server netip.AddrPort `json:"server"`
	Client netip.AddrPort `json:"client"`
	// Slot is the wire slot (peer id: 2 for the first client), -1 when
	// unknown; GameSlot the player slot of Settings and object ids (0 for the
	// first client on a dedicated server), -1 when unknown.
	Slot     int    `json:"slot"`
	GameSlot int    `json:"game_slot"`
	Name     string `json:"name"`
	Team     int    `json:"team"` // -1 when unknown
	Ship     string `json:"ship"` // class of the latest ship

	Start    time.Time `json:"start"`     // first traffic seen
	LastSeen time.Time `json:"last_seen"` // last traffic seen
	// Reached is the furthest phase the traffic showed; MidCapture is set
	// when the session was already under way when the capture started, and
	// Inferred names the phases whose time is the first traffic that implies
	// them rather than the message that marks them.
	Reached    Phase     `json:"reached"`
	MidCapture bool      `json:"mid_capture"`
	Inferred   []string  `json:"inferred,omitempty"`
	EndReason  EndReason `json:"end_reason"`
	EndBy      string    `json:"end_by,omitempty"` // "client" or "server" for disconnects

	Phases    Phases          `json:"phases"`
	Checksums []ChecksumRound `json:"checksums"`

	Events        []Event    `json:"events"`
	EventsDropped int        `json:"events_dropped"`
	Chat          []ChatLine `json:"chat"`
	ChatDropped   int        `json:"chat_dropped"`

	Score Score `json:"score"`
	// ShipsCreated and ShipsDestroyed count the player's ships; Ships lists
	// the first Options.MaxShips of them.
	ShipsCreated   int        `json:"ships_created"`
	ShipsDestroyed int        `json:"ships_destroyed"`
	Ships          []Ship     `json:"ships"`
	StateUpdates   []ShipRate `json:"state_updates"`
	// Keepalive is the peer-info (type 0x00) spacing, by sender.
	Keepalive struct {
		Client Interval `json:"C->S"`
		Server Interval `json:"S->C"`
	} `json:"keepalive"`
	Relay Relay `json:"relay"`

	Reliability Reliability `json:"reliability"`
	Damaged     int         `json:"damaged"` // records of this session that carried an error
	// NonStock lists the kinds of intact messages not in stock's form,
	// in the order first seen (see NonStockKind).
	NonStock        []NonStockKind `json:"nonstock,omitempty"`
	NonStockDropped int            `json:"nonstock_dropped,omitempty"` // messages of kinds beyond the list's cap
	Traffic         Counts         `json:"-"`

	times timeArena // where the time pointers above point
}

// NonStockKind is one kind of non-stock message in a session: a registry
// form (dissect.Forms) in one message and direction, counted from its
// first to its last instance.
type NonStockKind struct {
	form dissect.FormID
	op   int // game opcode, -1 for a transport message
	typ  dissect.TransportType
	dir  game.Direction // Dir's

	Name       string    `json:"name"`    // the registry's name ("unknown" when no form fits)
	Message    string    `json:"message"` // the game message or transport message it is
	Dir        string    `json:"dir"`
	Count      int       `json:"count"`
	FirstFrame int       `json:"first_frame"`
	FirstTime  time.Time `json:"first_time"`
	LastFrame  int       `json:"last_frame"`
	LastTime   time.Time `json:"last_time"`
	Text       string    `json:"text"`     // the first instance's mark, as decode prints it
	Evidence   string    `json:"evidence"` // the registry's stock evidence
}

// maxNonStockKinds caps a session's NonStock list.
const maxNonStockKinds = 64

// Duration is the time from Start to the end (or the last traffic).
func (s *Session) Duration() time.Duration {
	if s.Phases.End != nil {
		return s.Phases.End.Sub(s.Start)
	}
	return s.LastSeen.Sub(s.Start)
}
