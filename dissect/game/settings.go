package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// Settings (0x00) is the game configuration the host sends a joining player
// once every checksum round has passed, right after ChecksumComplete (0x28)
// and right before GameInit (0x01), all three in one datagram.
//
// Wire order: game time (f32), the collision-damage and friendly-fire bits,
// the player slot (u8), the mission script name (u16 length + bytes), and a
// third bit saying checksum corrections follow. The third bit is written
// after the name but lands in the same bit group byte as the first two, so a
// stock message has one group byte, 0x61 when only collision damage is on.
type Settings struct {
	// GameTime is the host's game clock in seconds.
	GameTime        float32 `json:"game_time"`
	CollisionDamage bool    `json:"collision_damage"`
	FriendlyFire    bool    `json:"friendly_fire"`
	// PlayerSlot is the joining player's game slot (0-15), not its wire
	// peer id: the first client (peer 0x02) gets slot 0 on a dedicated host.
	PlayerSlot uint8 `json:"player_slot"`
	// Map is the mission script module, e.g.
	// "Multiplayer.Episode.Mission1.Mission1".
	Map string `json:"map"`
	// ChecksumCorrection is set when checksum correction data follows.
	ChecksumCorrection bool `json:"checksum_correction"`
	// CorrectionData is everything after the header when ChecksumCorrection
	// is set. No source documents its layout, so it is kept as bytes (and
	// the decoder warns); Append writes it only when ChecksumCorrection is set.
	CorrectionData HexData `json:"correction_data,omitempty"`
}

func init() { register(OpSettings, func() Message { return new(Settings) }) }

func (m *Settings) Opcode() Opcode { return OpSettings }

func (m *Settings) decode(r *dissect.Reader, ctx *Context) {
	m.GameTime = r.F32("game time")
	group := connPeekByte(r)
	m.CollisionDamage = r.Bit("collision damage")
	m.FriendlyFire = r.Bit("friendly fire")
	m.PlayerSlot = r.U8("player slot")
	m.Map = ctx.str(r.String16("map name"))
	m.ChecksumCorrection = r.Bit("checksum correction flag")
	verifyStockBitGroup(r, group, "settings bit group", m.CollisionDamage, m.FriendlyFire, m.ChecksumCorrection)
	m.CorrectionData = nil
	if m.ChecksumCorrection {
		m.CorrectionData = r.Bytes(r.Len(), "checksum correction data")
	}
}

// Append encodes m. A map name longer than 65535 bytes is cut to fit.
func (m *Settings) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpSettings)))
	w.F32(m.GameTime)
	w.Bit(m.CollisionDamage)
	w.Bit(m.FriendlyFire)
	w.U8(m.PlayerSlot)
	w.String16([]byte(m.Map))
	w.Bit(m.ChecksumCorrection)
	if m.ChecksumCorrection {
		w.Raw(m.CorrectionData)
	}
	return w.Bytes()
}

func (m *Settings) String() string {
	s := fmt.Sprintf("time=%v collision=%s ff=%s slot=%d map=%q correction=%s",
		m.GameTime, connOnOff(m.CollisionDamage), connOnOff(m.FriendlyFire), m.PlayerSlot, m.Map,
		connOnOff(m.ChecksumCorrection))
	if m.ChecksumCorrection {
		s += fmt.Sprintf(" data=% X", []byte(m.CorrectionData))
	}
	return s
}

func (m *Settings) warning() string {
	if m.ChecksumCorrection {
		return "Settings carries checksum correction data; its layout is undocumented and it is shown as bytes"
	}
	return ""
}

func connOnOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

// connPeekByte returns the next unread byte without consuming it (0 at the end;
// the read that follows then fails on its own).
func connPeekByte(r *dissect.Reader) byte {
	if rest := r.Rest(); len(rest) > 0 {
		return rest[0]
	}
	return 0
}

// verifyStockBitGroup fails the message unless group, a bit group byte the
// message has just read bits from, is exactly what the stock writer makes of
// those bits: the count in the top three bits and no stray value bits. The
// Reader accepts a group that claims more bits than the message reads, or
// has bits set past its count; neither occurs in stock traffic (it is what
// a writer storing count-1 produces, such as OpenBC's early 0x41 Settings),
// and such a message could not be re-encoded byte for byte.
func verifyStockBitGroup(r *dissect.Reader, group byte, what string, bits ...bool) {
	if r.Err() != nil {
		return
	}
	want := byte(len(bits)) << 5
	for i, v := range bits {
		if v {
			want |= 1 << i
		}
	}
	if group != want {
		r.Failf(what, "group byte %#02x is not the stock encoding of these %d bits (%#02x)", group, len(bits), want)
	}
}
