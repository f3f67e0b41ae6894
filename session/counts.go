package session

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// Counts is traffic counted by direction: transport messages by type, game
// messages by opcode, GameSpy datagrams by kind. Its size is fixed (a few
// arrays), whatever the length of the capture; only GameSpy grows, by query
// kind.
type Counts struct {
	First, Last time.Time // capture times of the first and last record counted

	Datagrams [2]int        // by direction index (see DirIndex)
	Transport [2][256]Tally // by direction and transport type byte
	Opcodes   [2][256]Tally // by direction and game opcode
	Damaged   [2]int        // damaged datagrams by direction
	// NonStock counts intact messages not in stock's form, by direction
	// and registry form (dissect.FormUnknown for unknown ones).
	NonStock [2][dissect.NumForms]int
	Lost     int            // fragment sets or IPv4 datagrams never completed
	Unplaced int            // damaged capture records with no direction
	GameSpy  map[string]int // GameSpy datagrams by query kind ("reply" for replies)
}

// Tally is a count of messages and their bytes.
type Tally struct {
	Count int `json:"count"`
	Bytes int `json:"bytes"`
}

func (t *Tally) add(o Tally) {
	t.Count += o.Count
	t.Bytes += o.Bytes
}

// DirIndex maps a direction to the index Counts uses: 0 for client to
// server, 1 for server to client, -1 otherwise.
func DirIndex(d game.Direction) int {
	switch d {
	case game.ClientToServer:
		return 0
	case game.ServerToClient:
		return 1
	}
	return -1
}

// Dirs are the directions in index order.
var Dirs = [2]game.Direction{game.ClientToServer, game.ServerToClient}

// Add counts one record. Use it to count records outside a Builder.
func (c *Counts) Add(r *flow.Record) {
	if !r.Time.IsZero() {
		if c.First.IsZero() || r.Time.Before(c.First) {
			c.First = r.Time
		}
		if r.Time.After(c.Last) {
			c.Last = r.Time
		}
	}
	c.count(r)
}

// count is Add without First and Last, which the Builder follows with a
// span.
func (c *Counts) count(r *flow.Record) {
	d := DirIndex(r.Dir)
	switch r.Kind {
	case flow.KindGameSpy:
		if c.GameSpy == nil {
			c.GameSpy = map[string]int{}
		}
		kind := "reply"
		switch {
		case r.Master != nil:
			kind = "master-" + r.Master.Kind.String()
		case r.GameSpy != nil && r.GameSpy.Query:
			kind = r.GameSpy.Kind
		}
		c.GameSpy[kind]++
	case flow.KindLost:
		c.Lost++
	case flow.KindDamaged:
		switch {
		case d < 0:
			c.Unplaced++
		default:
			if r.MsgIndex == 0 {
				c.Datagrams[d]++
			}
			c.Damaged[d]++
		}
	case flow.KindMessage:
		var t tally
		if t.of(r) {
			c.countTally(&t)
		}
	}
}

// tally is what a message record adds to a Counts, worked out once for the
// totals and the session's traffic.
type tally struct {
	d        int  // direction index
	datagram bool // the first message of its datagram
	typ      dissect.TransportType
	raw      int // message bytes
	game     bool
	op       game.Opcode // when game
	payload  int         // game message bytes, when game
	nonStock bool        // the message is marked non-stock, in form
	form     dissect.FormID
}

// of works out the tally of r; it is false when r is not a message or its
// direction is unknown (nothing counts then).
func (t *tally) of(r *flow.Record) bool {
	d := DirIndex(r.Dir)
	if r.Kind != flow.KindMessage || d < 0 {
		return false
	}
	*t = tally{d: d, datagram: r.MsgIndex == 0, typ: r.Msg.Type, raw: len(r.Msg.Raw)}
	if r.Game != nil && len(r.Payload) > 0 {
		t.game, t.op, t.payload = true, r.Game.Msg.Opcode(), len(r.Payload)
	}
	if r.NonStock != nil {
		t.nonStock, t.form = true, r.NonStock.Form
	}
	return true
}

func (c *Counts) countTally(t *tally) {
	d := t.d & 1 // 0 or 1: spares the bounds checks
	if t.datagram {
		c.Datagrams[d]++
	}
	tt := &c.Transport[d][t.typ]
	tt.Count++
	tt.Bytes += t.raw
	if t.game {
		o := &c.Opcodes[d][t.op]
		o.Count++
		o.Bytes += t.payload
	}
	if t.nonStock {
		c.NonStock[d][t.form%dissect.NumForms]++
	}
}

// NonStockTotal is the number of non-stock messages counted.
func (c *Counts) NonStockTotal() int {
	n := 0
	for d := range 2 {
		for _, v := range c.NonStock[d] {
			n += v
		}
	}
	return n
}

// Merge adds o's counts to c.
func (c *Counts) Merge(o *Counts) {
	if !o.First.IsZero() && (c.First.IsZero() || o.First.Before(c.First)) {
		c.First = o.First
	}
	if o.Last.After(c.Last) {
		c.Last = o.Last
	}
	c.mergeCounts(o)
}

// mergeCounts is Merge without First and Last.
func (c *Counts) mergeCounts(o *Counts) {
	for d := range 2 {
		c.Datagrams[d] += o.Datagrams[d]
		c.Damaged[d] += o.Damaged[d]
		for i := range c.NonStock[d] {
			c.NonStock[d][i] += o.NonStock[d][i]
		}
		addTallies(&c.Transport[d], &o.Transport[d])
		addTallies(&c.Opcodes[d], &o.Opcodes[d])
	}
	c.Lost += o.Lost
	c.Unplaced += o.Unplaced
	for k, v := range o.GameSpy {
		if c.GameSpy == nil {
			c.GameSpy = map[string]int{}
		}
		c.GameSpy[k] += v
	}
}

// addTallies adds src to dst. A session's tallies are mostly zero (it ends
// in Builder totals one by one): four at a time, zeros are skipped.
func addTallies(dst, src *[256]Tally) {
	for i := 0; i < len(src); i += 4 {
		s := src[i : i+4 : i+4]
		if s[0].Count|s[0].Bytes|s[1].Count|s[1].Bytes|s[2].Count|s[2].Bytes|s[3].Count|s[3].Bytes == 0 {
			continue
		}
		d := dst[i : i+4 : i+4]
		for j := range s {
			d[j].add(s[j])
		}
	}
}

// Duration is the time between the first and the last record counted.
func (c *Counts) Duration() time.Duration {
	if c.First.IsZero() {
		return 0
	}
	return c.Last.Sub(c.First)
}

// GameMessages is the number of game messages counted in direction index d.
func (c *Counts) GameMessages(d int) (n, bytes int) {
	for i := range c.Opcodes[d] {
		n += c.Opcodes[d][i].Count
		bytes += c.Opcodes[d][i].Bytes
	}
	return n, bytes
}

// OpcodeRow is one line of opcode statistics.
type OpcodeRow struct {
	Dir    string      `json:"dir"` // "C->S" or "S->C"
	Opcode game.Opcode `json:"opcode"`
	Hex    string      `json:"hex"`
	Name   string      `json:"name"`
	Count  int         `json:"count"`
	Bytes  int         `json:"bytes"`
	// Share is Count over all game messages of the same direction, and
	// ByteShare the same for bytes (0..1).
	Share     float64 `json:"share"`
	ByteShare float64 `json:"byte_share"`
	// PerMinute and Per15Min are Count over the counted duration; the
	// protocol notes quote stock traffic per 15-minute session. Both are 0
	// when the duration is under a second. Every copy on the wire counts,
	// retransmissions included.
	PerMinute float64 `json:"per_min"`
	Per15Min  float64 `json:"per_15min"`
}

// OpcodeRows lists every opcode seen, client to server first, each direction
// in opcode order; nil when there are none.
func (c *Counts) OpcodeRows() []OpcodeRow {
	var seen [256]uint8
	n := len(seenCodes(seen[:0], &c.Opcodes[0])) + len(seenCodes(seen[:0], &c.Opcodes[1]))
	if n == 0 {
		return nil
	}
	return c.AppendOpcodeRows(make([]OpcodeRow, 0, n))
}

// AppendOpcodeRows appends the rows OpcodeRows lists to rows: a printer
// that writes a session's rows out before the next session's reuses one
// slice.
func (c *Counts) AppendOpcodeRows(rows []OpcodeRow) []OpcodeRow {
	minutes := c.Duration().Minutes()
	if c.Duration() < time.Second {
		minutes = 0
	}
	names := opcodeNames()
	var buf [256]uint8
	for d := range 2 {
		tallies := &c.Opcodes[d]
		seen := seenCodes(buf[:0], tallies)
		var total, totalBytes int
		for _, op := range seen {
			total += tallies[op].Count
			totalBytes += tallies[op].Bytes
		}
		dir := Dirs[d].String()
		for _, op := range seen {
			t := tallies[op]
			row := OpcodeRow{Dir: dir, Opcode: game.Opcode(op), Hex: hexByte(op), Name: names[op],
				Count: t.Count, Bytes: t.Bytes,
				Share: round(ratio(t.Count, total), 1e4), ByteShare: round(ratio(t.Bytes, totalBytes), 1e4)}
			if minutes > 0 {
				row.PerMinute = round(float64(t.Count)/minutes, 1e3)
				row.Per15Min = round(float64(t.Count)*15/minutes, 1e3)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// seenCodes appends to seen the indexes of tallies with a count, in
// order. Most of the 256 are zero, and four are tested at once.
func seenCodes(seen []uint8, tallies *[256]Tally) []uint8 {
	for i := 0; i < len(tallies); i += 4 {
		q := tallies[i : i+4 : i+4]
		if q[0].Count|q[1].Count|q[2].Count|q[3].Count == 0 {
			continue
		}
		for j := range q {
			if q[j].Count != 0 {
				seen = append(seen, uint8(i+j))
			}
		}
	}
	return seen
}

// opcodeNames and transportNames are the names of all opcodes and
// transport types, made once: every session's rows need them.
var (
	opcodeNames = sync.OnceValue(func() *[256]string {
		var names [256]string
		for op := range names {
			names[op] = game.Opcode(op).String()
		}
		return &names
	})
	transportNames = sync.OnceValue(func() *[256]string {
		var names [256]string
		for t := range names {
			names[t] = dissect.TransportType(t).String()
		}
		return &names
	})
)

// TransportRow is one line of transport-type counts.
type TransportRow struct {
	Dir   string                `json:"dir"`
	Type  dissect.TransportType `json:"type"`
	Hex   string                `json:"hex"`
	Name  string                `json:"name"`
	Count int                   `json:"count"`
	Bytes int                   `json:"bytes"`
}

// TransportRows lists every transport type seen, client to server first,
// each direction in type order; nil when there are none.
func (c *Counts) TransportRows() []TransportRow {
	var seen [256]uint8
	n := len(seenCodes(seen[:0], &c.Transport[0])) + len(seenCodes(seen[:0], &c.Transport[1]))
	if n == 0 {
		return nil
	}
	return c.AppendTransportRows(make([]TransportRow, 0, n))
}

// AppendTransportRows appends the rows TransportRows lists to rows (see
// AppendOpcodeRows).
func (c *Counts) AppendTransportRows(rows []TransportRow) []TransportRow {
	names := transportNames()
	var buf [256]uint8
	for d := range 2 {
		dir := Dirs[d].String()
		for _, t := range seenCodes(buf[:0], &c.Transport[d]) {
			cnt := c.Transport[d][t]
			rows = append(rows, TransportRow{Dir: dir, Type: dissect.TransportType(t), Hex: hexByte(t),
				Name: names[t], Count: cnt.Count, Bytes: cnt.Bytes})
		}
	}
	return rows
}

// GameSpyRow is the count of one kind of GameSpy datagram.
type GameSpyRow struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// GameSpyRows lists GameSpy datagrams by kind in name order.
func (c *Counts) GameSpyRows() []GameSpyRow {
	rows := make([]GameSpyRow, 0, len(c.GameSpy))
	for k, v := range c.GameSpy {
		rows = append(rows, GameSpyRow{Kind: k, Count: v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Kind < rows[j].Kind })
	return rows
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// round rounds f to 1/scale, so that JSON shows a few digits, always the
// same ones.
func round(f, scale float64) float64 { return math.Round(f*scale) / scale }

// hexBytes holds "0x00" to "0xFF" in a row: hexByte slices it rather than
// allocating.
const hexBytes = "0x000x010x020x030x040x050x060x070x080x090x0A0x0B0x0C0x0D0x0E0x0F" +
	"0x100x110x120x130x140x150x160x170x180x190x1A0x1B0x1C0x1D0x1E0x1F" +
	"0x200x210x220x230x240x250x260x270x280x290x2A0x2B0x2C0x2D0x2E0x2F" +
	"0x300x310x320x330x340x350x360x370x380x390x3A0x3B0x3C0x3D0x3E0x3F" +
	"0x400x410x420x430x440x450x460x470x480x490x4A0x4B0x4C0x4D0x4E0x4F" +
	"0x500x510x520x530x540x550x560x570x580x590x5A0x5B0x5C0x5D0x5E0x5F" +
	"0x600x610x620x630x640x650x660x670x680x690x6A0x6B0x6C0x6D0x6E0x6F" +
	"0x700x710x720x730x740x750x760x770x780x790x7A0x7B0x7C0x7D0x7E0x7F" +
	"0x800x810x820x830x840x850x860x870x880x890x8A0x8B0x8C0x8D0x8E0x8F" +
	"0x900x910x920x930x940x950x960x970x980x990x9A0x9B0x9C0x9D0x9E0x9F" +
	"0xA00xA10xA20xA30xA40xA50xA60xA70xA80xA90xAA0xAB0xAC0xAD0xAE0xAF" +
	"0xB00xB10xB20xB30xB40xB50xB60xB70xB80xB90xBA0xBB0xBC0xBD0xBE0xBF" +
	"0xC00xC10xC20xC30xC40xC50xC60xC70xC80xC90xCA0xCB0xCC0xCD0xCE0xCF" +
	"0xD00xD10xD20xD30xD40xD50xD60xD70xD80xD90xDA0xDB0xDC0xDD0xDE0xDF" +
	"0xE00xE10xE20xE30xE40xE50xE60xE70xE80xE90xEA0xEB0xEC0xED0xEE0xEF" +
	"0xF00xF10xF20xF30xF40xF50xF60xF70xF80xF90xFA0xFB0xFC0xFD0xFE0xFF"

func hexByte(b uint8) string { return hexBytes[4*int(b) : 4*int(b)+4] }

// NonStockRow is one line of a non-stock table: the messages of one
// registry form in one direction.
type NonStockRow struct {
	Dir      string `json:"dir"`
	Name     string `json:"name"`
	Count    int    `json:"count"`
	What     string `json:"what"`
	Evidence string `json:"evidence"`
}

// NonStockRows lists c's non-stock messages by direction and form, in
// registry order; nil when there are none.
func (c *Counts) NonStockRows() []NonStockRow { return c.AppendNonStockRows(nil) }

// AppendNonStockRows appends the rows NonStockRows lists to rows (see
// AppendOpcodeRows).
func (c *Counts) AppendNonStockRows(rows []NonStockRow) []NonStockRow {
	for d, dir := range Dirs {
		for f, n := range c.NonStock[d] {
			if n == 0 {
				continue
			}
			e := &dissect.Forms[f]
			rows = append(rows, NonStockRow{Dir: dir.String(), Name: e.Name, Count: n, What: e.What, Evidence: e.Evidence})
		}
	}
	return rows
}
