package game

// The second set of stock byte strings (../shared/vectors/stock-payloads-2.json),
// most from the Valentine's-day battle trace. Where a source's words and its
// bytes disagree the bytes win; each such conflict is named in its check
// (CONFLICT: what the source says, what the decoder reads, and why).

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// builtinStockPayloads2 is a copy of the file's UDP, transport and game
// entries (its four tcp-plaintext ones, the GameSpy master list protocol,
// are another issue's), so that the test runs where ../shared is absent.
var builtinStockPayloads2 = []stockPayload{
	{"Packet #1: Connect (transport 0x03), first packet of the Valentine's battle trace", "udp-plaintext", "C->S", "FF 01 03 0F C0 00 00 0A 0A 0A EF F9 78 00 00 00 00", true},
	{"Packet #2: ACK + ConnectAck (transport 0x03) + ChecksumReq round 0, Valentine's battle", "udp-plaintext", "S->C", "01 03 01 00 00 02 03 06 C0 00 00 02 32 1B 80 00 00 20 00 08 00 73 63 72 69 70 74 73 2F 07 00 41 70 70 2E 70 79 63 20", true},
	{"Packet #17: ACK + 0x28 + Settings (0x00) + GameInit (0x01), post-checksum bundle, Valentine's battle", "udp-plaintext", "S->C", "01 04 01 04 00 00 32 06 80 05 00 28 32 33 80 06 00 00 00 20 BF 41 61 00 25 00 4D 75 6C 74 69 70 6C 61 79 65 72 2E 45 70 69 73 6F 64 65 2E 4D 69 73 73 69 6F 6E 31 2E 4D 69 73 73 69 6F 6E 31 32 06 80 07 00 01", true},
	{"Packet #20: ACK + MISSION_INIT (0x35) + DeletePlayerUI (0x17, target 0x791), Valentine's battle", "udp-plaintext", "S->C", "01 03 01 05 00 00 32 0A 80 08 00 35 08 01 FF FF 32 17 80 09 00 17 66 08 00 00 F1 00 80 00 00 00 00 00 91 07 00 00 02", true},
	{"Packet #311: ACK + MISSION_INIT + SCORE (0x37) + ObjCreateTeam (0x03, Cady2) + DeletePlayerUI, second player joins", "udp-plaintext", "S->C", "01 05 01 05 00 00 32 0A 80 08 00 35 08 01 FF FF 32 16 80 09 00 37 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 32 74 80 0A 00 03 00 02 08 80 00 00 FF FF FF 3F 01 5A 34 94 42 26 2F 09 C2 5B F4 3C C2 C2 02 66 3F D9 6D 9F 3E 37 F9 E4 3D B5 BF 93 3E CA 54 4D F2 FB A3 40 05 43 61 64 79 32 06 4D 75 6C 74 69 31 FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF FF FF 64 60 01 FF FF FF 64 FF FF FF FF FF FF FF 64 00 FF 64 FF FF FF 64 01 FF 32 17 80 0B 00 17 66 08 00 00 F1 00 80 00 00 00 00 00 91 07 00 00 03", true},
	{"Packet #56: ObjCreateTeam (0x03) Cady2 / Multi1, first message of a 208-byte client datagram", "transport-message", "C->S", "32 74 80 06 00 03 00 02 08 80 00 00 FF FF FF 3F 01 00 00 B0 42 00 00 84 C2 00 00 92 C2 F5 4A 6F 3F FE 8C 96 3E 84 E3 4B 3E 38 78 4E 3C 00 00 00 00 00 00 00 05 43 61 64 79 32 06 4D 75 6C 74 69 31 FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF FF FF 64 60 01 FF FF FF 64 FF FF FF FF FF FF FF 64 00 FF 64 FF FF FF 64 01 FF", true},
	{"StateUpdate (0x1C) flags 0x9D POS+FWD+UP+SPD+WPN, client ship, embedded in packet #56", "game-payload", "C->S", "1C FF FF FF 3F 00 80 E1 41 9D 00 00 B0 42 00 00 84 C2 00 00 92 C2 21 37 FB 0B 68 46 30 BB 5E 00 00 01 CC 02 CC 04 CC", true},
	{"Packet #31026: two BeamFire (0x1A) messages, client datagram, third message elided", "udp-plaintext", "C->S", "02 03 32 13 80 DB 00 1A 77 00 00 40 02 75 0E D2 03 68 00 08 40 32 13 80 DC 00 1A 78 00 00 40 02 75 09 D2 03 68 00 08 40", false},
	{"BeamFire (0x1A) obj 0x40000078, second message of packet #31026", "transport-message", "C->S", "32 13 80 DC 00 1A 78 00 00 40 02 75 09 D2 03 68 00 08 40", true},
	{"Packet #2829: Explosion (0x29), server datagram to Peer#2", "udp-plaintext", "S->C", "01 01 32 13 80 0F 00 29 FF FF FF 3F 1D 7A 0C 95 61 1B 57 E2 78", true},
	{"Packet #2830: Explosion (0x29), server datagram to Peer#2", "udp-plaintext", "S->C", "01 01 32 13 80 10 00 29 FF FF FF 3F E6 7C 06 F0 61 03 50 E2 78", true},
	{"Packet #3029: CHAT_MESSAGE (0x2C) \"IT WORKS\", client to server", "udp-plaintext", "C->S", "03 01 32 14 80 2B 00 2C 03 00 00 00 08 00 49 54 20 57 4F 52 4B 53", true},
	{"CollisionEffect (0x15), client datagram, Valentine's battle (target 0x4003FFFF)", "udp-plaintext", "C->S", "03 01 32 1F 80 07 00 15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF 03 40 01 27 77 11 B8 9D 47 25 44", true},
	{"Packet #300: StateUpdate (0x1C) SUB-only, startIdx 8, server datagram", "udp-plaintext", "S->C", "01 01 32 1C 00 1C FF FF FF 3F 00 A0 1B 42 20 08 FF 60 FF FF FF FF FF FF FF FF FF FF FF FF", true},
	{"GameSpy heartbeat to master server (plaintext UDP)", "udp-plaintext", "", "5C 68 65 61 72 74 62 65 61 74 5C 30 5C 67 61 6D 65 6E 61 6D 65 5C 62 63 6F 6D 6D 61 6E 64 65 72 5C 73 74 61 74 65 63 68 61 6E 67 65 64 5C 31", true},
	{"GameSpy \\status\\ reply, stock dedicated server (267 bytes, plaintext UDP)", "udp-plaintext", "S->C", "5C 67 61 6D 65 6E 61 6D 65 5C 62 63 6F 6D 6D 61 6E 64 65 72 5C 67 61 6D 65 76 65 72 5C 36 30 5C 6C 6F 63 61 74 69 6F 6E 5C 31 5C 68 6F 73 74 6E 61 6D 65 5C 4D 79 20 47 61 6D 65 32 33 5C 6D 69 73 73 69 6F 6E 73 63 72 69 70 74 5C 4D 75 6C 74 69 70 6C 61 79 65 72 2E 45 70 69 73 6F 64 65 2E 4D 69 73 73 69 6F 6E 31 2E 4D 69 73 73 69 6F 6E 31 5C 6D 61 70 6E 61 6D 65 5C 44 4D 5C 6E 75 6D 70 6C 61 79 65 72 73 5C 30 5C 6D 61 78 70 6C 61 79 65 72 73 5C 38 5C 67 61 6D 65 6D 6F 64 65 5C 6F 70 65 6E 70 6C 61 79 69 6E 67 5C 74 69 6D 65 6C 69 6D 69 74 5C 2D 31 5C 66 72 61 67 6C 69 6D 69 74 5C 2D 32 5C 73 79 73 74 65 6D 5C 4D 75 6C 74 69 31 5C 70 61 73 73 77 6F 72 64 5C 30 5C 70 6C 61 79 65 72 5F 30 5C 44 65 64 69 63 61 74 65 64 20 53 65 72 76 65 72 5C 66 69 6E 61 6C 5C 5C 71 75 65 72 79 69 64 5C 32 2E 31", true},
	{"GameSpy \\status\\ query (LAN broadcast, plaintext UDP)", "udp-plaintext", "C->S", "5C 73 74 61 74 75 73 5C", true},
	{"Connect (transport 0x03), client datagram, wire-format-audit session", "udp-plaintext", "C->S", "FF 01 03 0F C0 00 00 0A 0A 0A EF 5F 0A 00 00 00 00", true},
	{"Settings (0x00) payload, packet #27 of the audit session (map name elided)", "game-payload", "S->C", "00 00 32 98 42 61 00 25 00 4D", false},
	{"ACK (transport 0x01) 01 00 00 02, server, flags 0x02", "transport-message", "S->C", "01 00 00 02", true},
	{"ACK (transport 0x01) 01 01 00 02, server, flags 0x02", "transport-message", "S->C", "01 01 00 02", true},
	{"ACK (transport 0x01) 01 02 00 01, server, flags 0x01", "transport-message", "S->C", "01 02 00 01", false},
	{"StartFiring (0x07) in reliable 0x32 message, first message of a 2-message client datagram (VDAY line 2182)", "transport-message", "C->S", "32 1E 80 07 00 07 28 81 00 00 D8 00 80 00 00 00 00 00 05 00 00 40 00 00 00 00 00 00 00 00", true},
	{"ObjCreateTeam (0x03) XFS01 Dauntless, owner 1 team 3 (test_battle.c DAUNTLESS_SHIP_DATA)", "game-payload", "", "03 01 03 08 80 00 00 FF FF 03 40 03 00 00 60 41 00 00 D8 C1 00 00 90 41 B5 CE 0F 3F 39 DC E3 B3 43 C2 15 BF 43 C2 15 BF 00 00 00 00 00 00 00 0F 58 46 53 30 31 20 44 61 75 6E 74 6C 65 73 73 06 4D 75 6C 74 69 31 FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 60 00 FF FF FF FF FF FF FF FF FF 64 01 FF FF FF FF 64 FF FF FF 64 FF FF FF FF FF 64 01 FF FF 64", true},
	{"PythonEvent (0x06) ObjectExplodingEvent 0x8129, stock self-destruct (lifetime 9.5)", "game-payload", "S->C", "06 29 81 00 00 4E 00 80 00 00 00 00 00 FF FF FF 3F 00 00 00 00 00 00 18 41", true},
	{"HostMsg (0x13) self-destruct request, 1 byte", "game-payload", "C->S", "13", true},
	{"TGBootPlayerMessage (transport 0x04), boot reason 4 (kicked), slot 2", "transport-message", "", "04 07 C0 02 00 04 02", true},
	{"Cipher pair: packet #3 ConnectAck, wire 01 D7 33 68 C3 BF 76 DB", "udp-plaintext", "S->C", "01 01 03 06 C0 00 00 02", true},
	{"PythonEvent (0x06) factory 0x010C TGObjPtrEvent in reliable 0x32 message (datagram #33820 msg 0)", "transport-message", "S->C", "32 1A 80 68 02 06 0C 01 00 00 74 00 80 00 75 00 08 40 68 00 08 40 72 00 08 40", true},
}

// has checks that message i's text form (as decoded) holds every part.
func has(t *testing.T, d *stockDecoded, i int, parts ...string) {
	t.Helper()
	if i >= len(d.texts) {
		t.Fatalf("%d game messages decoded, want message %d", len(d.texts), i)
	}
	for _, p := range parts {
		if !strings.Contains(d.texts[i], p) {
			t.Errorf("message %d %q lacks %q", i, d.texts[i], p)
		}
	}
}

// transport checks datagram message i's type and sequence number, and
// that a control message parses to a text form holding want.
func transport(t *testing.T, d *stockDecoded, i int, typ dissect.TransportType, seq uint16, want string) {
	t.Helper()
	if i >= len(d.dg.Messages) {
		t.Fatalf("%d transport messages, want message %d", len(d.dg.Messages), i)
	}
	m := &d.dg.Messages[i]
	lcWant(t, "type", m.Type, typ)
	lcWant(t, "seq (little-endian)", m.Seq, seq)
	if want != "" {
		c, err := dissect.ParseControl(m)
		if err != nil {
			t.Fatalf("control: %v", err)
		}
		got, _ := json.Marshal(c)
		if !strings.Contains(string(got), want) {
			t.Errorf("control %s lacks %s", got, want)
		}
	}
}

// seqConflict is the note of the entries whose source reads the sequence
// number big-endian.
const seqConflict = "CONFLICT: the source reads the sequence number after flags_len big-endian; " +
	"the decoder reads it little-endian (PROTOCOL.md, and the STBC documents), so 05 00 is 5"

var stockChecks2 = map[string]func(t *testing.T, d *stockDecoded){
	"Packet #1: Connect (transport 0x03), first packet of the Valentine's battle trace": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "dir", d.dg.Peer, uint8(0xFF))
		lcWant(t, "msg_count", len(d.dg.Messages), 1)
		lcWant(t, "totalLen", len(d.dg.Messages[0].Raw), 15)
		transport(t, d, 0, dissect.TypeConnectAck, 0, `"ip":"10.10.10.239"`)
	},
	"Packet #2: ACK + ConnectAck (transport 0x03) + ChecksumReq round 0, Valentine's battle": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "dir", d.dg.Peer, uint8(1))
		lcWant(t, "msg_count", len(d.dg.Messages), 3)
		transport(t, d, 0, dissect.TypeAck, 0, "")
		transport(t, d, 1, dissect.TypeConnectAck, 0, `"slot":2`)
		lcWant(t, "totalLen", len(d.dg.Messages[1].Raw), 6)
		transport(t, d, 2, dissect.TypeData, 0, "")
		lcWant(t, "reliable totalLen", len(d.dg.Messages[2].Raw), 27)
		has(t, d, 0, "round=0", `dir="scripts/"`, `filter="App.pyc"`, "recursive=false")
	},
	"Packet #17: ACK + 0x28 + Settings (0x00) + GameInit (0x01), post-checksum bundle, Valentine's battle": func(t *testing.T, d *stockDecoded) {
		t.Log(seqConflict)
		lcWant(t, "msg_count", len(d.dg.Messages), 4)
		transport(t, d, 0, dissect.TypeAck, 4, "")
		for i, seq := range []uint16{5, 6, 7} {
			transport(t, d, 1+i, dissect.TypeData, seq, "")
		}
		lcWant(t, "opcodes", [3]Opcode{d.msgs[0].Opcode(), d.msgs[1].Opcode(), d.msgs[2].Opcode()}, [3]Opcode{0x28, OpSettings, 0x01})
		m := lcAs[*Settings](t, d.msgs[1])
		lcNear(t, "gameTime", float64(m.GameTime), 23.89, 0.005)
		lcWant(t, "collision", m.CollisionDamage, true)
		lcWant(t, "friendlyFire", m.FriendlyFire, false)
		lcWant(t, "slot", m.PlayerSlot, uint8(0))
		lcWant(t, "map", m.Map, "Multiplayer.Episode.Mission1.Mission1")
		lcWant(t, "checksumCorrection", m.ChecksumCorrection, false)
	},
	"Packet #20: ACK + MISSION_INIT (0x35) + DeletePlayerUI (0x17, target 0x791), Valentine's battle": func(t *testing.T, d *stockDecoded) {
		t.Log(seqConflict)
		transport(t, d, 0, dissect.TypeAck, 5, "")
		transport(t, d, 1, dissect.TypeData, 8, "")
		transport(t, d, 2, dissect.TypeData, 9, "")
		// "species" (section 3) and "systemIndex" (section 6.3) name the
		// same byte: the decoder calls it the system.
		has(t, d, 0, "players=8", "system=1", "time=none", "frags=none")
		has(t, d, 1, "target=0x00000791", "peer=2")
	},
	"Packet #311: ACK + MISSION_INIT + SCORE (0x37) + ObjCreateTeam (0x03, Cady2) + DeletePlayerUI, second player joins": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "msg_count", len(d.dg.Messages), 5)
		has(t, d, 0, "players=8", "system=1")
		// CONFLICT: the source says the 0x37 body is all zeros; its
		// first i32 (the player id) is 2. The bytes win.
		has(t, d, 1, "player=2", "kills=0", "deaths=0", "score=0")
		// CONFLICT: the field table puts a speed (f32) and three zero
		// bytes after the orientation; here the seven bytes are CA 54
		// 4D F2 FB A3 40, a speed of -4.07e30 that way. The decoder reads
		// a direction (three signed bytes: a unit vector, |(-54, 84, 77)|
		// = 126.1 of 127) and then the speed, 5.12 (see ObjCreate).
		has(t, d, 2, "owner=0", "team=2", "object=0x3FFFFFFF", `player="Cady2"`, `set="Multi1"`, "dir=(-0.43, 0.66, 0.61)", "speed=5.12")
		stockSpecies1Misfit(t, d)
		has(t, d, 3, "target=0x00000791", "peer=3")
	},
	"Packet #56: ObjCreateTeam (0x03) Cady2 / Multi1, first message of a 208-byte client datagram": func(t *testing.T, d *stockDecoded) {
		t.Log(seqConflict)
		transport(t, d, 0, dissect.TypeData, 6, "")
		lcWant(t, "len", len(d.dg.Messages[0].Raw), 116)
		m := lcAs[*ObjCreate](t, d.msgs[0])
		lcWant(t, "owner", m.Owner, uint8(0))
		lcWant(t, "team", m.Team, uint8(2))
		lcWant(t, "objId", m.Object, ObjectID(0x3FFFFFFF))
		lcWant(t, "speciesId", uint8(m.Species), uint8(1))
		lcWant(t, "pos", m.Position, dissect.Vec3{X: 88, Y: -66, Z: -73})
		lcWant(t, "playerName", m.PlayerName, "Cady2")
		lcWant(t, "shipClass (the set name)", m.SetName, "Multi1")
		stockSpecies1Misfit(t, d)
	},
	"StateUpdate (0x1C) flags 0x9D POS+FWD+UP+SPD+WPN, client ship, embedded in packet #56": func(t *testing.T, d *stockDecoded) {
		m := lcAs[*StateUpdate](t, d.msgs[0])
		lcWant(t, "object_id", m.Object, ObjectID(0x3FFFFFFF))
		lcNear(t, "game_time", float64(m.GameTime), 28.19, 0.005)
		lcWant(t, "dirty_flags", m.Flags, StateFlags(0x9D))
		lcWant(t, "position", m.Position, dissect.Vec3{X: 88, Y: -66, Z: -73})
		lcWant(t, "has_hash", m.HasHash, true)
		lcWant(t, "subsys_hash", m.Hash, uint16(0xFB37))
		lcWant(t, "speed", m.Speed.Float(), float32(0))
		// "100%" is the source's reading of the health byte 0xCC.
		has(t, d, 0, "fwd=(0.09, 0.82, 0.55)", "up=(0.38, -0.54, 0.74)", "weapons=[1:0xCC 2:0xCC 4:0xCC]")
	},
	"Packet #31026: two BeamFire (0x1A) messages, client datagram, third message elided": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "msg_count_byte", d.dg.Count, uint8(3))
		has(t, d, 0, "phaser=0x40000077", "dir=(0.92, 0.11, -0.36)", "target=0x40080068")
		has(t, d, 1, "phaser=0x40000078", "dir=(0.92, 0.07, -0.36)", "target=0x40080068")
		stockCut(t, d, 40, "message 3 of 3")
	},
	"BeamFire (0x1A) obj 0x40000078, second message of packet #31026": func(t *testing.T, d *stockDecoded) {
		has(t, d, 0, "phaser=0x40000078", "dir=(0.92, 0.07, -0.36)", "target=0x40080068")
	},
	"Packet #2829: Explosion (0x29), server datagram to Peer#2": func(t *testing.T, d *stockDecoded) {
		stockExplosion(t, d, dissect.Vec3{X: 43.2, Y: 181.6, Z: 17.9}, 50.0)
	},
	"Packet #2830: Explosion (0x29), server datagram to Peer#2": func(t *testing.T, d *stockDecoded) {
		stockExplosion(t, d, dissect.Vec3{X: -42.8, Y: 204.1, Z: 9.9}, 10.1)
	},
	"Packet #3029: CHAT_MESSAGE (0x2C) \"IT WORKS\", client to server": func(t *testing.T, d *stockDecoded) {
		t.Log(seqConflict)
		lcWant(t, "datagram_len", len(d.dg.Messages[0].Raw)+2, 22)
		transport(t, d, 0, dissect.TypeData, 43, "")
		m := lcAs[*Chat](t, d.msgs[0])
		lcWant(t, "senderSlot", m.SenderID, int32(3))
		lcWant(t, "text", m.Text, "IT WORKS")
	},
	"CollisionEffect (0x15), client datagram, Valentine's battle (target 0x4003FFFF)": func(t *testing.T, d *stockDecoded) {
		// "31 bytes total (25-byte payload)": the transport message and
		// the bytes after the opcode, not the datagram (33 bytes).
		lcWant(t, "31 bytes total", len(d.dg.Messages[0].Raw), 31)
		lcWant(t, "25-byte payload", len(d.dg.Messages[0].Payload)-1, 25)
		m := lcAs[*CollisionEffect](t, d.msgs[0])
		lcWant(t, "target", m.Target, ObjectID(0x4003FFFF))
		lcWant(t, "contacts", len(m.Contacts), 1)
	},
	"Packet #300: StateUpdate (0x1C) SUB-only, startIdx 8, server datagram": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "delivery unreliable", d.dg.Messages[0].Reliable, false)
		m := lcAs[*StateUpdate](t, d.msgs[0])
		lcWant(t, "obj", m.Object, ObjectID(0x3FFFFFFF))
		lcNear(t, "gameTime", float64(m.GameTime), 38.91, 0.005)
		lcWant(t, "flags", m.Flags, StateSubsystems)
		lcWant(t, "startIdx", m.SubsystemStart, uint8(8))
		// The per-byte health reading ("60 = ~38%") is the source's; the
		// notes call it doubtful, and the ship's class is not known here
		// (its ObjCreate did not fit its list), so the bytes are kept.
	},
	"GameSpy heartbeat to master server (plaintext UDP)": func(t *testing.T, d *stockDecoded) {
		stockGameSpy(t, d, 47, map[string]string{"heartbeat": "0", "gamename": "bcommander", "statechanged": "1"})
	},
	"GameSpy \\status\\ reply, stock dedicated server (267 bytes, plaintext UDP)": func(t *testing.T, d *stockDecoded) {
		stockGameSpy(t, d, 267, map[string]string{"gamename": "bcommander", "gamever": "60", "location": "1",
			"hostname": "My Game23", "missionscript": "Multiplayer.Episode.Mission1.Mission1", "mapname": "DM",
			"numplayers": "0", "maxplayers": "8", "gamemode": "openplaying", "timelimit": "-1", "fraglimit": "-2",
			"system": "Multi1", "password": "0", "player_0": "Dedicated Server", "queryid": "2.1"})
	},
	"GameSpy \\status\\ query (LAN broadcast, plaintext UDP)": func(t *testing.T, d *stockDecoded) {
		stockGameSpy(t, d, 8, map[string]string{"status": ""})
	},
	"Connect (transport 0x03), client datagram, wire-format-audit session": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "dir INIT", d.dg.Peer, uint8(0xFF))
		lcWant(t, "msgs", len(d.dg.Messages), 1)
		lcWant(t, "len", len(d.dg.Messages[0].Raw), 15)
		transport(t, d, 0, dissect.TypeConnectAck, 0, `"kind":"connect-request"`)
	},
	"Settings (0x00) payload, packet #27 of the audit session (map name elided)": func(t *testing.T, d *stockDecoded) {
		m := lcAs[*Settings](t, d.msgs[0])
		lcNear(t, "gameTime", float64(m.GameTime), 76.1, 0.005)
		lcWant(t, "bit_byte", stockHex(t, d, 5), uint8(0x61))
		lcWant(t, "collision", m.CollisionDamage, true)
		lcWant(t, "friendlyFire", m.FriendlyFire, false)
		lcWant(t, "playerSlot", m.PlayerSlot, uint8(0))
		stockCut(t, d, 9, "map name")
	},
	"ACK (transport 0x01) 01 00 00 02, server, flags 0x02": func(t *testing.T, d *stockDecoded) {
		transport(t, d, 0, dissect.TypeAck, 0, "")
		lcWant(t, "flags", d.dg.Messages[0].AckFlags, uint8(0x02))
	},
	"ACK (transport 0x01) 01 01 00 02, server, flags 0x02": func(t *testing.T, d *stockDecoded) {
		transport(t, d, 0, dissect.TypeAck, 1, "")
		lcWant(t, "flags", d.dg.Messages[0].AckFlags, uint8(0x02))
	},
	"ACK (transport 0x01) 01 02 00 01, server, flags 0x01": func(t *testing.T, d *stockDecoded) {
		// Flags bit 0 means a fragment index follows, which the quote
		// lacks: it is cut there.
		stockCut(t, d, 4, "ack fragment index")
	},
	"StartFiring (0x07) in reliable 0x32 message, first message of a 2-message client datagram (VDAY line 2182)": func(t *testing.T, d *stockDecoded) {
		transport(t, d, 0, dissect.TypeData, 7, "")
		lcWant(t, "payload_len", len(d.dg.Messages[0].Payload), 25)
		// CONFLICT: the source reads 28 81 00 00 as an object id
		// 0x00008128; like every event's first four bytes it is the event
		// class (0x8128, StartFiringEvent), followed by the event code.
		has(t, d, 0, "class=StartFiringEvent", "code=ET_START_FIRING_NOTIFY", "dst=0x40000005")
	},
	"ObjCreateTeam (0x03) XFS01 Dauntless, owner 1 team 3 (test_battle.c DAUNTLESS_SHIP_DATA)": func(t *testing.T, d *stockDecoded) {
		m := lcAs[*ObjCreate](t, d.msgs[0])
		lcWant(t, "slot", m.Owner, uint8(1))
		lcWant(t, "team", m.Team, uint8(3))
		lcWant(t, "objId", m.Object, ObjectID(0x4003FFFF))
		lcWant(t, "name", m.PlayerName, "XFS01 Dauntless")
		lcWant(t, "set", m.SetName, "Multi1")
		// CONFLICT: "Sovereign-class variant" per the file; the species
		// byte is 3, the Galaxy in the stock SpeciesToShip table, and the
		// bytes fit the Galaxy's subsystem list entry for entry.
		lcWant(t, "ship", ShipBySpecies(m.Species).Name, "Galaxy")
		lcWant(t, "subsystems by name", len(m.Subsystems), len(ShipBySpecies(m.Species).Subsystems))
	},
	"PythonEvent (0x06) ObjectExplodingEvent 0x8129, stock self-destruct (lifetime 9.5)": func(t *testing.T, d *stockDecoded) {
		m := stockMsg[*PythonEvent](t, d, 0)
		lcWant(t, "factory_id", m.Class, EventClass(0x8129))
		lcWant(t, "event_type", m.Code, EventCode(0x0080004E))
		lcWant(t, "source", m.Source, ObjectID(0))
		lcWant(t, "dest", m.Dest, ObjectID(0x3FFFFFFF))
		lcWant(t, "firing_player", m.FiringPlayer, int32(0))
		lcNear(t, "lifetime", float64(m.Lifetime), 9.5, 0.0001)
	},
	"HostMsg (0x13) self-destruct request, 1 byte": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "opcode", d.msgs[0].Opcode(), Opcode(0x13))
		lcWant(t, "size", len(d.msgs[0].Append(nil)), 1)
	},
	"TGBootPlayerMessage (transport 0x04), boot reason 4 (kicked), slot 2": func(t *testing.T, d *stockDecoded) {
		lcWant(t, "header", string(d.dg.Messages[0].Raw[1:3]), "\x07\xC0")
		lcWant(t, "reliable+ordered", d.dg.Messages[0].Reliable && d.dg.Messages[0].Ordered, true)
		// conn_id 02 00 is the sequence number.
		transport(t, d, 0, dissect.TypeBoot, 2, `"kind":"boot"`)
		// CONFLICT (left open): the source reads the two payload bytes
		// 04 02 as boot reason 4 and slot 2. The decoder keeps them raw:
		// that reading rests on one document, which names no trace and
		// whose sender may be a modified server, and no live peer sends a
		// transport boot (OpenBC kicks with game opcode 0x04 [reason]).
		lcWant(t, "payload kept raw", string(d.dg.Messages[0].Payload), "\x04\x02")
	},
	"Cipher pair: packet #3 ConnectAck, wire 01 D7 33 68 C3 BF 76 DB": func(t *testing.T, d *stockDecoded) {
		transport(t, d, 0, dissect.TypeConnectAck, 0, `"slot":2`)
		plain := fixture.Unhex(t, "01 01 03 06 C0 00 00 02")
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		lcWant(t, "wire_ciphertext", string(wire), string(fixture.Unhex(t, "01 D7 33 68 C3 BF 76 DB")))
	},
	"PythonEvent (0x06) factory 0x010C TGObjPtrEvent in reliable 0x32 message (datagram #33820 msg 0)": func(t *testing.T, d *stockDecoded) {
		tm := &d.dg.Messages[0]
		lcWant(t, "flags_len", uint16(tm.Raw[1])|uint16(tm.Raw[2])<<8, uint16(0x801A))
		lcWant(t, "totalLen", len(tm.Raw), 26)
		lcWant(t, "seq_bytes 68 02", tm.Seq, uint16(0x0268))
		lcWant(t, "body_len_from_opcode", len(tm.Payload), 21)
		// CONFLICT: the source labels it REPAIR_CANNOT (0x00800075); the
		// four bytes after the factory are 74 00 80 00, event 0x00800074,
		// and 75 00 08 40 the next field, an object id. The bytes win.
		has(t, d, 0, "class=TGObjPtrEvent", "code=ET_REPAIR_COMPLETED", "src=0x40080075", "dst=0x40080068", "obj_ptr=0x40080072")
	},
}

// stockSpecies1Misfit: the species-1 ship's subsystem bytes of packets #56
// and #311 do not fit its list (walked in step, the phasers' and
// torpedoes' bytes after their power are 60 and 64 00 where every fitting
// stock create has 01 and 60 00, and the warp engines' condition would be
// 1 on a fresh spawn), so the decoder keeps them as bytes and warns.
func stockSpecies1Misfit(t *testing.T, d *stockDecoded) {
	t.Helper()
	for _, w := range d.warnings {
		if strings.Contains(w, "do not fit") && strings.Contains(w, "60 where every stock create that fits has 01") {
			return
		}
	}
	t.Errorf("no misfit warning for the species-1 subsystem bytes: %q", d.warnings)
}

// stockExplosion checks an explosion of 0x3FFFFFFF near impact whose
// radius is radius, the damage 5997.8.
//
// CONTESTED: OpenBC's phase1 notes and compare_traces.py read the two CF16
// values as damage then radius; its explosion wire-format page, and
// seeds/001 (which PROTOCOL.md, the first authority, follows) as radius
// then damage. The decoder reads radius then damage, and the bytes agree:
// the first value differs between the two explosions (50.0, 10.1) while the
// second is the same 5997.8, and the impacts lie within some 200 units of
// the origin, ship-scale distances for a radius of 10 to 50, while a
// 6000-unit radius would cover the whole play area.
func stockExplosion(t *testing.T, d *stockDecoded, impact dissect.Vec3, radius float64) {
	t.Helper()
	m := lcAs[*Explosion](t, d.msgs[0])
	lcWant(t, "obj", m.Object, ObjectID(0x3FFFFFFF))
	v := m.Impact.Vec()
	for i, c := range [3][2]float32{{v.X, impact.X}, {v.Y, impact.Y}, {v.Z, impact.Z}} {
		lcNear(t, "impact "+string(rune('x'+i)), float64(c[0]), float64(c[1]), 0.06)
	}
	lcNear(t, "radius (contested: the source's dmg)", float64(m.Radius.Float()), radius, 0.05)
	lcNear(t, "damage (contested: the source's radius)", float64(m.Damage.Float()), 5997.8, 0.05)
}

// stockGameSpy checks a plaintext GameSpy datagram's length and keys.
func stockGameSpy(t *testing.T, d *stockDecoded, n int, want map[string]string) {
	t.Helper()
	lcWant(t, "len", len(d.raw), n)
	g, err := dissect.ParseGameSpy(d.raw)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(g)
	for k, v := range want {
		kv, _ := json.Marshal(struct {
			K string `json:"key"`
			V string `json:"value"`
		}{k, v})
		if k == "queryid" {
			kv, _ = json.Marshal(map[string]string{k: v})
			kv = bytes.Trim(kv, "{}")
		}
		if !bytes.Contains(got, kv) {
			t.Errorf("%s: no %s", got, kv)
		}
	}
}

// TestStockPayloads2 decodes every UDP, transport and game entry of
// ../shared/vectors/stock-payloads-2.json (or its built-in copy) in file
// order with one Decoder: complete entries with no error, no warning and
// no leftover, to their stated values, except where a check names the
// conflict and the reading the decoder follows; partial ones as far as
// their bytes go.
func TestStockPayloads2(t *testing.T) {
	entries := builtinStockPayloads2
	raw, err := os.ReadFile(filepath.Join(vectorsDir, "stock-payloads-2.json"))
	switch {
	case os.IsNotExist(err):
		t.Logf("%s absent: using the built-in copy", vectorsDir)
	case err != nil:
		t.Fatal(err)
	default:
		var all, shared []stockPayload
		if err := json.Unmarshal(raw, &all); err != nil || len(all) == 0 {
			t.Fatalf("stock-payloads-2.json: %v (%d entries)", err, len(all))
		}
		for _, e := range all {
			if e.Layer != "tcp-plaintext" {
				shared = append(shared, e)
			}
		}
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
	// Entries whose warnings are the conflict their check names.
	warns := map[string]bool{
		"Packet #311: ACK + MISSION_INIT + SCORE (0x37) + ObjCreateTeam (0x03, Cady2) + DeletePlayerUI, second player joins": true,
		"Packet #56: ObjCreateTeam (0x03) Cady2 / Multi1, first message of a 208-byte client datagram":                       true,
	}
	dec := NewDecoder()
	for _, e := range entries {
		t.Run(e.Label, func(t *testing.T) {
			check := stockChecks2[e.Label]
			if check == nil {
				t.Fatalf("no check for this entry")
			}
			var d *stockDecoded
			if b := fixture.Unhex(t, e.Hex); dissect.IsGameSpy(b) {
				d = &stockDecoded{raw: b}
			} else {
				d = decodeStock(t, dec, e)
			}
			if e.Complete && d.cut != nil || e.Complete && len(d.warnings) > 0 && !warns[e.Label] {
				t.Errorf("warnings %q, cut %v", d.warnings, d.cut)
			}
			check(t, d)
		})
	}
}
