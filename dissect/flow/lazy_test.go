package flow

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

// lazyCaptures are the bundled captures with StateUpdates of every kind:
// decoded by class, undecoded, OpenBC's forms (non-stock), damage around.
var lazyCaptures = []string{
	filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"),
	filepath.Join("..", "..", "testdata", "pcaps", "damaged.pcap"),
	filepath.Join("..", "..", "testdata", "pcaps", "lossy.pcap"),
	filepath.Join("..", "..", "testdata", "pcaps", "duel.pcapng"),
	filepath.Join("..", "..", "testdata", "openbc", "networked-battle.pcap"),
}

// recordText is what a printer shows of r: its place, its message's text
// and JSON, its error, warning and non-stock mark.
func recordText(r *Record) string {
	s := fmt.Sprintf("%d %d/%d %d %v %q", r.Kind, r.Frame, r.MsgIndex, r.Reassembled, r.Err, r.Warning)
	if ns := r.NonStock; ns != nil {
		s += fmt.Sprintf(" ns=%+v", *ns)
	}
	if g := r.Game; g != nil {
		s += fmt.Sprintf(" %s %s %v %x", g.Msg.Opcode(), g.Msg.String(), g.Err, g.Unparsed)
		if j, ok := g.Msg.(interface{ AppendJSON([]byte) []byte }); ok {
			s += " " + string(j.AppendJSON(nil))
		}
	}
	if r.Lazy {
		s += " LAZY"
	}
	return s
}

// runLazy decodes path with the Tracker deferring StateUpdates or not, on
// workers goroutines (0: Run), decoding each Lazy record with a
// LazyDecoder as decode's printer does; stopAt > 0 makes emit stop the
// run at that record (which, like decode, it decodes for the counts).
func runLazy(t *testing.T, open func() (*capture.Reader, error), lazy bool, workers, stopAt int) ([]string, Summary) {
	t.Helper()
	rd, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	tr := New(Options{Servers: []netip.AddrPort{netip.MustParseAddrPort(oddServer)}})
	tr.DeferStateUpdates(lazy)
	var z LazyDecoder
	var res game.Result
	var texts []string
	emit := func(r *Record) bool {
		if len(texts)+1 == stopAt {
			if r.Lazy {
				z.Count(r)
			}
			texts = append(texts, "stop")
			return false
		}
		if lazy && r.Kind == KindMessage && r.Game != nil && r.Game.Msg.Opcode() == game.OpStateUpdate && r.Msg.Type == 0x32 && !r.Msg.Fragment && r.Msg.NonStock == 0 && len(r.Payload) >= 5 {
			t.Fatalf("frame %d: a StateUpdate of its own data message was decoded by the deferring Tracker", r.Frame)
		}
		if r.Lazy {
			c := *r
			z.Decode(&c, &res)
			r = &c
		}
		texts = append(texts, recordText(r))
		return true
	}
	var sum Summary
	if workers == 0 {
		sum, err = Run(rd, tr, emit)
	} else {
		sum, err = RunParallel(rd, tr, workers, emit)
	}
	if err != nil {
		t.Fatal(err)
	}
	z.AddTo(&sum.Flow)
	return texts, sum
}

// A Tracker that defers StateUpdates, with each Lazy record decoded by a
// LazyDecoder, gives the records and the Summary of one that does not, on
// captures with StateUpdates decoded by class, undecoded and in OpenBC's
// forms, also when emit stops the run midway (the records after it are
// decoded by the Tracker for its counts).
func TestLazyStateUpdatesMatchEager(t *testing.T) {
	for _, path := range lazyCaptures {
		open := func() (*capture.Reader, error) { return capture.Open(path) }
		for _, stopAt := range []int{0, 1500, 1501, 1502} {
			want, wsum := runLazy(t, open, false, 0, stopAt)
			if len(want) < 100 {
				t.Fatalf("%s: only %d records", path, len(want))
			}
			for _, workers := range []int{0, 2} {
				got, gsum := runLazy(t, open, true, workers, stopAt)
				if gsum != wsum {
					t.Errorf("%s stop %d workers %d: summary\n%+v\nwant\n%+v", path, stopAt, workers, gsum, wsum)
				}
				if len(got) != len(want) {
					t.Errorf("%s stop %d workers %d: %d records, want %d", path, stopAt, workers, len(got), len(want))
					continue
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("%s stop %d workers %d: record %d\n%s\nwant\n%s", path, stopAt, workers, i, got[i], want[i])
						break
					}
				}
			}
		}
	}
}

const (
	oddServer = "127.0.0.1:29881"
	oddClient = "127.0.0.1:37187"
)

// oddStateUpdates are datagrams with StateUpdates of the kinds that are
// rare in the captures: OpenBC's forms (a ship created, then its
// subsystems in OpenBC's shield-generator-byte form: frames 30, 32 and 35
// of OpenBC's self-destruct test, decrypted), one that ends early, one
// shorter than its object id, and ones that warn.
var oddStateUpdates = []struct {
	fromServer bool
	plain      string // a whole datagram
	game       string // or a game message, alone in a data message
}{
	{false, "0201327480060003000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff", ""},
	{true, "01013219001cffffff3f6110983e2000ffffff20ffffffffffff20", ""},
	{true, "01013217001cffffff3f6110183f2009ffffff20ffffffff20", ""},
	{false, "", "1CFFFFFF3F000020411E7F00007F0000007F50420054"}, // ends at its speed
	{false, "", "1CFFFFFF"},                         // shorter than an object id
	{true, "", "1CFFFFFF3F0000204180" + "0ACC0BCC"}, // weapons from the host
	{false, "", "1CFFFFFF3F0000204120" + "00FFFF"},  // subsystems from a client
	{false, "", "1C07000040000020418003CC04"},       // an odd weapon byte, unknown object
	{true, "", "1CFFFFFF3F00002041A000FFFF"},        // both round-robins
}

// Odd StateUpdates (OpenBC's forms, errors, warnings) decoded lazily give
// the records and counts of the Tracker's own decoding.
func TestLazyOddStateUpdatesMatchEager(t *testing.T) {
	s := newScene(t)
	for _, d := range oddStateUpdates {
		var plain []byte
		var err error
		if d.plain != "" {
			plain, err = hex.DecodeString(d.plain)
		} else {
			var p []byte
			p, err = hex.DecodeString(d.game)
			peer := byte(2)
			if d.fromServer {
				peer = 1
			}
			plain = (&dissect.Datagram{Peer: peer, Messages: []dissect.Message{{Type: dissect.TypeData, Payload: p}}}).Append(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		src, dst := oddClient, oddServer
		if d.fromServer {
			src, dst = dst, src
		}
		s.raw(src, dst, wire)
	}
	if err := s.w.Flush(); err != nil {
		t.Fatal(err)
	}
	open := func() (*capture.Reader, error) { return capture.NewReader(bytes.NewReader(s.buf.Bytes())) }
	want, wsum := runLazy(t, open, false, 0, 0)
	got, gsum := runLazy(t, open, true, 0, 0)
	if f := wsum.Flow; f.NonStock < 3 || f.Warnings < 6 || f.GameErrors < 2 {
		t.Errorf("the odd StateUpdates are not odd enough: %+v", f)
	}
	if gsum != wsum {
		t.Errorf("summary\n%+v\nwant\n%+v", gsum, wsum)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A LazyDecoder decodes a StateUpdate with the ship class it is given,
// whatever class it was given for the object before: the same message as
// every stock class, as an unknown one, and as the first again gives what
// a Decoder that knows the object as that class gives.
func TestLazyDecoderTakesEachRecordsClass(t *testing.T) {
	// Subsystem sections of the battle's StateUpdates.
	rd, err := capture.Open(lazyCaptures[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var payloads [][]byte
	if _, err := Run(rd, New(Options{}), func(r *Record) bool {
		if r.Game == nil {
			return true
		}
		if su, ok := r.Game.Msg.(*game.StateUpdate); ok && su.Flags&game.StateSubsystems != 0 && len(payloads) < 40 {
			payloads = append(payloads, append([]byte(nil), r.Payload...))
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(payloads) < 40 {
		t.Fatalf("only %d StateUpdates with subsystems", len(payloads))
	}
	classes := append(game.StockShips(), nil, game.StockShips()[0])
	var z LazyDecoder
	var res game.Result
	decoded := 0
	for _, p := range payloads {
		id := game.ObjectID(binary.LittleEndian.Uint32(p[1:]))
		for _, spec := range classes {
			dec := game.NewDecoder()
			dec.Ships.Add(id, spec)
			want := Record{Kind: KindMessage, Dir: game.ServerToClient}
			wres := dec.Decode(p, want.Dir)
			want.Game = &wres
			if wres.NonStock != nil {
				want.NonStock = wres.NonStock
			}
			want.Warning = wres.Warning
			got := Record{Kind: KindMessage, Dir: game.ServerToClient, Payload: p, Lazy: true, LazyShip: spec}
			z.Decode(&got, &res)
			if g, w := recordText(&got), recordText(&want); g != w {
				t.Fatalf("object %v as %v:\n%s\nwant\n%s", id, spec, g, w)
			}
			if su := res.Msg.(*game.StateUpdate); su.Class != nil {
				decoded++
			}
		}
	}
	if decoded == 0 {
		t.Error("no subsystem section decoded by class")
	}
}

// FuzzLazyDecoderMatchesTracker: any StateUpdate, any class, either
// direction, decoded by a LazyDecoder that decoded another message before
// (of the same object as another class) gives what a Decoder that knows
// the object as that class gives, and counts its marks.
func FuzzLazyDecoderMatchesTracker(f *testing.F) {
	for _, d := range oddStateUpdates {
		if d.game != "" {
			p, _ := hex.DecodeString(d.game)
			f.Add(p[1:], uint8(0), d.fromServer)
		}
	}
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0x3F, 0x61, 0x10, 0x98, 0x3E, 0x20, 0x00, 0xFF, 0xFF, 0xFF, 0x20, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x20}, uint8(3), true)
	ships := append(game.StockShips(), nil)
	f.Fuzz(func(t *testing.T, body []byte, class uint8, fromServer bool) {
		if len(body) < 4 {
			return // the Tracker decodes those itself
		}
		p := append([]byte{byte(game.OpStateUpdate)}, body...)
		spec := ships[int(class)%len(ships)]
		dir := game.ClientToServer
		if fromServer {
			dir = game.ServerToClient
		}
		dec := game.NewDecoder()
		dec.Ships.Add(game.ObjectID(binary.LittleEndian.Uint32(body)), spec)
		wres := dec.Decode(p, dir)
		want := Record{Kind: KindMessage, Dir: dir, Game: &wres, NonStock: wres.NonStock, Warning: wres.Warning}

		var z LazyDecoder
		var res game.Result
		other := Record{Kind: KindMessage, Dir: dir, Payload: p, Lazy: true, LazyShip: ships[(int(class)+1)%len(ships)]}
		z.Decode(&other, &res)
		z.AddTo(&Stats{})
		got := Record{Kind: KindMessage, Dir: dir, Payload: p, Lazy: true, LazyShip: spec}
		z.Decode(&got, &res)
		if g, w := recordText(&got), recordText(&want); g != w {
			t.Fatalf("\n%s\nwant\n%s", g, w)
		}
		var st Stats
		z.AddTo(&st)
		if (st.NonStock == 1) != (wres.NonStock != nil) || (st.Warnings == 1) != (wres.Warning != "") || (st.GameErrors == 1) != (wres.Err != nil) {
			t.Errorf("counts %+v for %+v", st, wres)
		}
	})
}
