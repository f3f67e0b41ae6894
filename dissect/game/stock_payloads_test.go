package game

import (
	"encoding/json"
	"errors"
	"github.com/bcwire/bcwire/internal/fixture"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
)

// stockPayload is one entry of ../shared/vectors/stock-payloads.json: bytes
// of stock traffic quoted in public trace analyses (README.md there).
type stockPayload struct {
	Label    string `json:"label"`
	Layer    string `json:"layer"`
	Dir      string `json:"direction"`
	Hex      string `json:"hex"`
	Complete bool   `json:"complete"`
}

// builtinStockPayloads is a copy of the file's entries (without the sources'
// stated values, which the checks below spell out field by field), so that
// the test runs where ../shared is absent.
var builtinStockPayloads = []stockPayload{
	{"ObjCreateTeam (0x03) Sovereign spawn, stock dedi collision test", "game-payload", "", "03 00 02 08 80 00 00 FF FF FF 3F 05 00 00 18 42 00 00 44 C2 00 00 0C C2 52 93 45 3F BB C9 22 BF E2 58 10 B3 25 8D 6C B2 00 00 00 00 00 00 00 05 43 61 64 79 32 06 4D 75 6C 74 69 31 FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 60 00 FF 64 FF FF FF FF FF FF FF FF FF 64 01 FF FF FF FF FF 64 01 FF FF FF 64 FF", false},
	{"CollisionEffect (0x15), stock dedi collision test", "game-payload", "C->S", "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 F9 7E 02 D8 65 C2 92 44", true},
	{"Settings (0x00), stock dedi (elided middle)", "game-payload", "S->C", "00 00 A0 AC 41 61 00 25 00 4D 75 6C", false},
	{"PythonEvent (0x06) ObjectExplodingEvent factory 0x8129, stock collision kill", "game-payload", "S->C", "06 29 81 00 00 4E 00 80 00 00 00 00 00 FF FF FF 3F 00 00 00 00 66 66 4E 41", true},
	{"SCORE_CHANGE (0x36), stock collision kill", "game-payload", "S->C", "36 00 00 00 00 02 00 00 00 01 00 00 00 00", true},
	{"MISSION_INIT (0x35), stock", "game-payload", "S->C", "35 08 01 FF FF", true},
	{"DeletePlayerUI (0x17) at join, stock", "game-payload", "S->C", "17 66 08 00 00 F1 00 80 00 00 00 00 00 A8 06 00 00 02", true},
	{"PythonEvent (0x06) TGSubsystemEvent 0x0101 ADD_TO_REPAIR_LIST, stock", "game-payload", "S->C", "06 01 01 00 00 DF 00 80 00 02 00 00 40 18 00 00 40", true},
	{"DeletePlayerUI (0x17) join-time, stock dedi self-destruct test packet #25", "game-payload", "S->C", "17 66 08 00 00 F1 00 80 00 00 00 00 00 4F 06 00 00 02", true},
	{"CollisionEffect (0x15) P1, Sovereign vs asteroid", "game-payload", "C->S", "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 0D 7E 00 D9 BB 20 A0 44", true},
	{"CollisionEffect (0x15) P4, 2 contacts", "game-payload", "C->S", "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 02 0F 7E 00 DA 00 7E FF D8 51 C3 67 44", true},
	{"Decrypted datagram #3: ConnectAck (transport 0x03)", "udp-plaintext", "S->C", "01 01 03 06 C0 00 00 02", true},
	{"Decrypted datagram #1764: transport Disconnect (0x05) + 2 stale ACKs", "udp-plaintext", "C->S", "02 03 05 0A C0 02 00 02 0A 0A 0A EF 01 27 00 00 01 28 00 00", true},
	{"Decrypted datagram #1765: ACK for disconnect", "udp-plaintext", "S->C", "01 01 01 02 00 02", true},
	{"TorpedoFire (0x19) no target, arc", "game-payload", "", "19 0D 00 00 40 02 01 DF 87 11 FF FF 03 40 00 88 D8 5C", true},
	{"BeamFire (0x1A) with target", "game-payload", "", "1A 77 00 00 40 02 75 0E D2 03 68 00 08 40", true},
	{"Transport Disconnect (type 0x05) message", "transport-message", "C->S", "05 0A C0 02 00 02 0A 00 32 03", true},
	{"MISSION_INIT (0x35) body without opcode byte, stock 2026-02-10 session", "game-payload", "S->C", "08 09 FF FF", false},
	{"PythonEvent (0x06) in reliable 0x32 message, factory 0x0101", "transport-message", "S->C", "32 16 80 D5 02 06 01 01 00 00 DF 00 80 00 74 00 00 40 85 00 00 40", true},
	{"Start of bundled datagram #136324 (110 messages), first msg unreliable StateUpdate", "udp-plaintext", "S->C", "01 6E 32 17 00 1C 0D 01 00 40", false},
	{"Decrypted datagram #52 (12 msgs): ObjNotFound + StateUpdate ...", "udp-plaintext", "S->C", "01 0C 32 0A 80 0A 00 1D FF FF FF 3F 32 17 00 1C FF FF FF 3F 80 EC 04 42 20 00 FF FF 20 FF FF FF FF FF FF 01", false},
	{"ObjNotFound (0x1D) for 0x3FFFFFFF, extracted from datagram #52", "game-payload", "S->C", "1D FF FF FF 3F", true},
	{"StateUpdate (0x1C) SUB-only, startIdx 0, collision test", "game-payload", "S->C", "1C FF FF FF 3F 80 EC 04 42 20 00 FF FF 20 FF FF FF FF FF FF", true},
}

// stockDecoded is what decoding one entry gave: the game messages in order
// (a transport layer's data messages decoded), and where the bytes were cut.
type stockDecoded struct {
	msgs     []Message
	texts    []string // each message's text form when it was decoded (the Decoder reuses one value per opcode)
	warnings []string
	dg       dissect.Datagram
	raw      []byte         // a plaintext GameSpy entry's bytes (not decoded here)
	cut      *dissect.Error // where a partial entry's bytes end, when they end inside a field
}

// stockChecks compares each entry's stated values (the sources' own field
// names in the comments) with the decoded fields, by label.
var stockChecks = map[string]func(t *testing.T, d *stockDecoded){
	"ObjCreateTeam (0x03) Sovereign spawn, stock dedi collision test": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*ObjCreate](t, d, 0)
		// The source reads byte 1 as team=0 and byte 2 as owner=2; other
		// sources, and the object id (0x3FFFFFFF: slot 0's first id),
		// read byte 1 as the owner slot and byte 2 as the team.
		lcWant(t, "stated team = byte 1 = owner slot", m.Owner, uint8(0))
		lcWant(t, "stated owner = byte 2 = team", m.Team, uint8(2))
		lcWant(t, "objectID", m.Object, ObjectID(0x3FFFFFFF))
		lcWant(t, "owner is the object id's slot", m.Object.Slot(), int(m.Owner))
		lcWant(t, "position", m.Position, dissect.Vec3{X: 38, Y: -49, Z: -35})
		lcWant(t, "player_name", m.PlayerName, "Cady2")
		lcWant(t, "set_name", m.SetName, "Multi1")
		lcWant(t, "ship", ShipBySpecies(m.Species).Name, "Sovereign")
		// Marked partial (118 bytes stated, 113 quoted), yet the 113
		// decode whole: the 53 after the set name are exactly the
		// Sovereign's eleven subsystem states, so the 5 missing are the
		// reliable transport header (32, flags and length, sequence).
		lcWant(t, "subsystems by name", len(m.Subsystems), 11)
		lcWant(t, "not cut", d.cut == nil, true)
	},
	"CollisionEffect (0x15), stock dedi collision test": func(t *testing.T, d *stockDecoded) {
		stockCollision(t, d, 0x3FFFFFFF, 1174.07, dissect.Contact{Dir: dissect.Dir3{-7, 126, 2}, Mag: 216})
	},
	"Settings (0x00), stock dedi (elided middle)": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*Settings](t, d, 0)
		lcNear(t, "gameTime", float64(m.GameTime), 21.58, 0.005)
		// configFlags 0x61 is the bit group byte: three bits, the first
		// (collision damage) set.
		lcWant(t, "configFlags byte", stockHex(t, d, 5), uint8(0x61))
		lcWant(t, "collision damage", m.CollisionDamage, true)
		lcWant(t, "friendly fire", m.FriendlyFire, false)
		stockCut(t, d, 9, "map name")
	},
	"PythonEvent (0x06) ObjectExplodingEvent factory 0x8129, stock collision kill": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*PythonEvent](t, d, 0)
		lcWant(t, "factory_id", m.Class, EventClass(0x8129))
		lcWant(t, "event_type", m.Code, EventCode(0x0080004E))
		lcWant(t, "source", m.Source, ObjectID(0))
		lcWant(t, "dest", m.Dest, ObjectID(0x3FFFFFFF))
		lcWant(t, "firing_player", m.FiringPlayer, int32(0))
		lcNear(t, "lifetime", float64(m.Lifetime), 12.9, 0.005)
	},
	"SCORE_CHANGE (0x36), stock collision kill": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*ScoreChange](t, d, 0)
		lcWant(t, "killer", m.KillerID, int32(0))
		lcWant(t, "victim", m.VictimID, int32(2))
		lcWant(t, "deaths", m.VictimDeaths, int32(1))
		// kill_credit 0 is the last byte: the count of other players'
		// scores that follow (none).
		lcWant(t, "kill_credit", len(m.Others), 0)
	},
	"MISSION_INIT (0x35), stock": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "maxPlayers", stockMsg[*MissionInit](t, d, 0).PlayerLimit, uint8(8))
	},
	"DeletePlayerUI (0x17) at join, stock": func(t *testing.T, d *stockDecoded) {
		stockDeletePlayer(t, d, 0x06A8)
	},
	"PythonEvent (0x06) TGSubsystemEvent 0x0101 ADD_TO_REPAIR_LIST, stock": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*PythonEvent](t, d, 0)
		lcWant(t, "factory", m.Class, EventClass(0x0101))
		lcWant(t, "event", m.Code, EventCode(0x008000DF))
		lcWant(t, "source", m.Source, ObjectID(0x40000002))
		lcWant(t, "dest", m.Dest, ObjectID(0x40000018))
		// "CloakingDevice (idx 2)" is the source's reading of the source
		// id: the third id of slot 0's block (no class is on the wire).
		lcWant(t, "subsystem idx", uint32(m.Source)-uint32(PlayerObjectID(0))-1, uint32(2))
	},
	"DeletePlayerUI (0x17) join-time, stock dedi self-destruct test packet #25": func(t *testing.T, d *stockDecoded) {
		stockDeletePlayer(t, d, 0x064F)
	},
	"CollisionEffect (0x15) P1, Sovereign vs asteroid": func(t *testing.T, d *stockDecoded) {
		stockCollision(t, d, 0x3FFFFFFF, 1281.02, dissect.Contact{Dir: dissect.Dir3{13, 126, 0}, Mag: 217})
	},
	"CollisionEffect (0x15) P4, 2 contacts": func(t *testing.T, d *stockDecoded) {
		stockCollision(t, d, 0x3FFFFFFF, 927.05, dissect.Contact{Dir: dissect.Dir3{15, 126, 0}, Mag: 218},
			dissect.Contact{Dir: dissect.Dir3{0, 126, -1}, Mag: 216})
	},
	"Decrypted datagram #3: ConnectAck (transport 0x03)": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "peer", d.dg.Peer, uint8(1))
		lcWant(t, "messages", len(d.dg.Messages), 1)
		lcWant(t, "type", d.dg.Messages[0].Type, dissect.TypeConnectAck)
	},
	"Decrypted datagram #1764: transport Disconnect (0x05) + 2 stale ACKs": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "peer", d.dg.Peer, uint8(2))
		lcWant(t, "msgs", len(d.dg.Messages), 3)
		lcWant(t, "disconnect type", d.dg.Messages[0].Type, dissect.TypeDisconnect)
		lcWant(t, "disconnect_byte1", d.dg.Messages[0].Raw[1], uint8(0x0A))
		for i, seq := range []uint16{39, 40} {
			lcWant(t, "ack type", d.dg.Messages[1+i].Type, dissect.TypeAck)
			lcWant(t, "ack_seqs", d.dg.Messages[1+i].Seq, seq)
		}
	},
	"Decrypted datagram #1765: ACK for disconnect": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "type", d.dg.Messages[0].Type, dissect.TypeAck)
		lcWant(t, "ack_seq", d.dg.Messages[0].Seq, uint16(2))
	},
	"TorpedoFire (0x19) no target, arc": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*TorpedoFire](t, d, 0)
		lcWant(t, "obj", m.Object, ObjectID(0x4000000D))
		// flags1 is the torpedo type byte, flags2 the flags byte.
		lcWant(t, "flags1", uint8(m.Type), uint8(0x02))
		lcWant(t, "flags2", uint8(m.Flags), uint8(0x01))
		lcWant(t, "trailing_int32v", m.Target, ObjectID(0x4003FFFF))
	},
	"BeamFire (0x1A) with target": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*BeamFire](t, d, 0)
		lcWant(t, "obj", m.Object, ObjectID(0x40000077))
		lcWant(t, "flags", m.Flags, uint8(0x02))
		lcWant(t, "target", m.Target, ObjectID(0x40080068))
	},
	"Transport Disconnect (type 0x05) message": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "type", d.dg.Messages[0].Type, dissect.TypeDisconnect)
		lcWant(t, "byte1", d.dg.Messages[0].Raw[1], uint8(0x0A))
		lcWant(t, "length", len(d.dg.Messages[0].Raw), 10)
	},
	"MISSION_INIT (0x35) body without opcode byte, stock 2026-02-10 session": func(t *testing.T, d *stockDecoded) {
		// Decoded with 0x35 put back in front (the entry's notes).
		m := stockMsg[*MissionInit](t, d, 0)
		lcWant(t, "maxPlayers", m.PlayerLimit, uint8(8))
		// totalSlots is the source's name for the byte this decoder calls
		// the system.
		lcWant(t, "totalSlots", m.System, uint8(9))
	},
	"PythonEvent (0x06) in reliable 0x32 message, factory 0x0101": func(t *testing.T, d *stockDecoded) {
		tm := &d.dg.Messages[0]
		lcWant(t, "flags_len", uint16(tm.Raw[1])|uint16(tm.Raw[2])<<8, uint16(0x8016))
		lcWant(t, "totalLen", len(tm.Raw), 22)
		lcWant(t, "body_len_from_opcode", len(tm.Payload), 17)
		m := stockMsg[*PythonEvent](t, d, 0)
		lcWant(t, "factory", m.Class, EventClass(0x0101))
		lcWant(t, "source", m.Source, ObjectID(0x40000074))
		lcWant(t, "dest", m.Dest, ObjectID(0x40000085))
	},
	"Start of bundled datagram #136324 (110 messages), first msg unreliable StateUpdate": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "peer", d.dg.Peer, uint8(1))
		lcWant(t, "messageCount", d.dg.Count, uint8(110))
		stockCut(t, d, 3, "data length")
	},
	"Decrypted datagram #52 (12 msgs): ObjNotFound + StateUpdate ...": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "msg_count", d.dg.Count, uint8(12))
		lcWant(t, "object not found", stockMsg[*ObjNotFound](t, d, 0).Object, ObjectID(0x3FFFFFFF))
		stockSovereignUpdate(t, stockMsg[*StateUpdate](t, d, 1))
		stockCut(t, d, 36, "")
	},
	"ObjNotFound (0x1D) for 0x3FFFFFFF, extracted from datagram #52": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "objectID", stockMsg[*ObjNotFound](t, d, 0).Object, ObjectID(0x3FFFFFFF))
	},
	"StateUpdate (0x1C) SUB-only, startIdx 0, collision test": func(t *testing.T, d *stockDecoded) {
		stockSovereignUpdate(t, stockMsg[*StateUpdate](t, d, 0))
	},
}

// stockSovereignUpdate checks the collision test's subsystem-only
// StateUpdate of the Sovereign, sent to its own player: Hull, then the
// Shield Generator (condition, the bit group byte 0x20 holding its one
// has-power bit, clear, six facing bytes). Every byte is accounted for.
func stockSovereignUpdate(t *testing.T, m *StateUpdate) {
	t.Helper()
	lcWant(t, "object_id", m.Object, ObjectID(0x3FFFFFFF))
	lcNear(t, "game_time", float64(m.GameTime), 33.23, 0.005)
	lcWant(t, "dirty_flags", m.Flags, StateSubsystems)
	lcWant(t, "start_index", m.SubsystemStart, uint8(0))
	if m.SubsystemsUndecoded || m.Class == nil || m.Class.Name != "Sovereign" || len(m.Subsystems) != 2 {
		t.Fatalf("not decoded as the Sovereign's: %s", m)
	}
	hull, shield := m.Subsystems[0], m.Subsystems[1]
	lcWant(t, "hull", hull.Name+" "+hull.Format.String(), "Hull base")
	lcWant(t, "hull condition", hull.Condition, uint8(0xFF))
	lcWant(t, "shield", shield.Name+" "+shield.Format.String(), "Shield Generator shield")
	lcWant(t, "shield condition", shield.Condition, uint8(0xFF))
	lcWant(t, "shield has power (own ship)", shield.HasPower, false)
	lcWant(t, "facings", string(shield.Facings), "\xFF\xFF\xFF\xFF\xFF\xFF")
	// condition_bytes are the whole section after the start index, and
	// idx2_value the bit group byte at its position 2.
	sec := m.Append(nil)[11:]
	lcWant(t, "condition_bytes", string(sec), "\xFF\xFF\x20\xFF\xFF\xFF\xFF\xFF\xFF")
	lcWant(t, "idx2_value", sec[2], uint8(0x20))
}

func stockCollision(t *testing.T, d *stockDecoded, target ObjectID, force float64, contacts ...dissect.Contact) {
	t.Helper()
	m := stockMsg[*CollisionEffect](t, d, 0)
	lcWant(t, "typeClassId", m.Class, EventClass(0x8124))
	lcWant(t, "eventCode", m.Code, EventCode(0x00800050))
	lcWant(t, "srcObjId", m.Source, ObjectID(0))
	lcWant(t, "tgtObjId", m.Target, target)
	lcWant(t, "contactCount", len(m.Contacts), len(contacts))
	for i := range min(len(contacts), len(m.Contacts)) {
		lcWant(t, "contact", m.Contacts[i], contacts[i])
	}
	lcNear(t, "force", float64(m.Force), force, 0.005)
}

func stockDeletePlayer(t *testing.T, d *stockDecoded, target ObjectID) {
	t.Helper()
	m := stockMsg[*DeletePlayerUI](t, d, 0)
	lcWant(t, "factory", m.Class, EventClass(0x0866))
	lcWant(t, "event", m.Code, EventCode(0x008000F1))
	lcWant(t, "src", m.Source, ObjectID(0))
	lcWant(t, "tgt", m.Target, target)
	lcWant(t, "peer_id", m.Peer, uint8(2))
}

func stockMsg[T Message](t *testing.T, d *stockDecoded, i int) T {
	t.Helper()
	if i >= len(d.msgs) {
		t.Fatalf("%d game messages decoded, want message %d", len(d.msgs), i)
	}
	return lcAs[T](t, d.msgs[i])
}

// stockHex is byte i of the first game message as decoded.
func stockHex(t *testing.T, d *stockDecoded, i int) uint8 {
	return d.msgs[0].Append(nil)[i]
}

// stockCut checks that a partial entry says where its bytes end.
func stockCut(t *testing.T, d *stockDecoded, offset int, what string) {
	t.Helper()
	if d.cut == nil {
		t.Fatalf("partial entry decoded without saying where it was cut")
	}
	if d.cut.Offset != offset || !strings.Contains(d.cut.What, what) || !errors.Is(d.cut, dissect.ErrShort) {
		t.Errorf("cut %v, want at offset %d in %q (input ends)", d.cut, offset, what)
	}
}

// decodeStock decodes one entry at its layer with d. A partial entry's
// game message is decoded field by field with its own decoder, so that the
// fields before the cut are there to compare.
func decodeStock(t *testing.T, dec *Decoder, e stockPayload) *stockDecoded {
	t.Helper()
	b := fixture.Unhex(t, e.Hex)
	if e.Label == "MISSION_INIT (0x35) body without opcode byte, stock 2026-02-10 session" {
		b = append([]byte{byte(OpMissionInit)}, b...)
	}
	dir := ServerToClient
	if e.Dir == "C->S" {
		dir = ClientToServer
	}
	out := &stockDecoded{}
	game := func(p []byte) {
		res := dec.Decode(p, dir)
		switch {
		case res.Err == nil:
			out.msgs = append(out.msgs, res.Msg)
			out.texts = append(out.texts, res.Msg.String())
			if res.Warning != "" || len(res.Unparsed) > 0 {
				out.warnings = append(out.warnings, res.Warning)
			}
		case e.Complete:
			t.Errorf("% X: %v", p, res.Err)
		default:
			m := New(Opcode(p[0]))
			r := dissect.NewReader(p[1:])
			m.decode(r, &Context{Dir: dir, Ships: &dec.Ships})
			out.msgs = append(out.msgs, m)
			out.texts = append(out.texts, m.String())
			if err := (*dissect.Error)(nil); errors.As(r.Err(), &err) {
				err.Offset++ // from the opcode byte
				out.cut = err
			}
		}
	}
	switch e.Layer {
	case "game-payload":
		game(b)
		return out
	case "transport-message":
		b = append([]byte{1, 1}, b...) // a datagram of one message
	}
	err := out.dg.Parse(b)
	if err != nil {
		if e.Complete || !errors.As(err, &out.cut) {
			t.Fatalf("datagram: %v", err)
		}
		if e.Layer == "transport-message" {
			out.cut.Offset -= 2
		}
	}
	for _, m := range out.dg.Messages {
		if m.Type == dissect.TypeData && !m.Fragment && len(m.Payload) > 0 {
			game(m.Payload)
		}
	}
	return out
}

// TestStockPayloads decodes every entry of ../shared/vectors/
// stock-payloads.json (or its built-in copy) in file order with one
// Decoder, as the collision test's ObjCreateTeam comes before that ship's
// StateUpdates: every complete entry with no error, no warning and no
// leftover bytes, to the values it states; every partial one as far as
// its bytes go, saying where they end.
func TestStockPayloads(t *testing.T) {
	entries := builtinStockPayloads
	raw, err := os.ReadFile(filepath.Join(vectorsDir, "stock-payloads.json"))
	switch {
	case os.IsNotExist(err):
		t.Logf("%s absent: using the built-in copy", vectorsDir)
	case err != nil:
		t.Fatal(err)
	default:
		var shared []stockPayload
		if err := json.Unmarshal(raw, &shared); err != nil || len(shared) == 0 {
			t.Fatalf("stock-payloads.json: %v (%d entries)", err, len(shared))
		}
		// The copy must be what the file holds, or the file has grown.
		if len(shared) != len(entries) {
			t.Errorf("the file has %d entries, the built-in copy %d: update the copy and the checks", len(shared), len(entries))
		}
		for i := range min(len(shared), len(entries)) {
			if shared[i] != entries[i] {
				t.Errorf("entry %d differs from the built-in copy:\n%+v\n%+v", i, shared[i], entries[i])
			}
		}
		entries = shared
	}
	dec := NewDecoder()
	for _, e := range entries {
		t.Run(e.Label, func(t *testing.T) {
			check := stockChecks[e.Label]
			if check == nil {
				t.Fatalf("no check for this entry")
			}
			d := decodeStock(t, dec, e)
			if e.Complete {
				if len(d.warnings) > 0 || d.cut != nil {
					t.Errorf("warnings %q, cut %v", d.warnings, d.cut)
				}
			} else if d.cut != nil {
				t.Logf("partial: cut at offset %d (%s)", d.cut.Offset, d.cut.What)
			}
			check(t, d)
		})
	}
}
