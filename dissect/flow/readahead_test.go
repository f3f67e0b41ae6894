package flow

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

// countingSource wraps a capture.Reader and counts the calls to Next; it
// claims nothing is buffered unless told otherwise, like a live pipe.
type countingSource struct {
	*capture.Reader
	nexts    int
	buffered bool
}

func (c *countingSource) Next() (*capture.Packet, error) {
	c.nexts++
	return c.Reader.Next()
}

// Buffered hides the Reader's own method.
func (c *countingSource) Buffered() int {
	if c.buffered {
		return c.Reader.Buffered()
	}
	return 0
}

func recordLines(t *testing.T, src Source) ([]string, Summary) {
	t.Helper()
	var lines []string
	sum, err := Run(src, New(Options{}), func(r *Record) bool {
		lines = append(lines, fmt.Sprintf("%d %d %v %v %v", r.Frame, r.MsgIndex, r.Kind, r.Msg != nil && r.Game != nil, r.Err))
		if r.Game != nil {
			lines[len(lines)-1] += " " + r.Game.Msg.String()
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines, sum
}

// Reading ahead to decrypt two datagrams at once must change nothing, and
// must not happen when the next record has not arrived yet: a datagram is
// reported before the source is asked for the one after it.
func TestReadAheadOnlyWhenBuffered(t *testing.T) {
	for _, name := range []string{"lossy.pcap", "duel.pcapng", "damaged.pcap"} {
		open := func(buffered bool) *countingSource {
			rd, err := capture.Open("../../testdata/pcaps/" + name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rd.Close() })
			return &countingSource{Reader: rd, buffered: buffered}
		}
		ahead := open(true)
		want, wantSum := recordLines(t, ahead)

		pipe := open(false)
		var lines []string
		lagging := 0
		_, err := Run(pipe, New(Options{}), func(r *Record) bool {
			lines = append(lines, fmt.Sprintf("%d %d %v %v %v", r.Frame, r.MsgIndex, r.Kind, r.Msg != nil && r.Game != nil, r.Err))
			if r.Game != nil {
				lines[len(lines)-1] += " " + r.Game.Msg.String()
			}
			// Records come from the datagram last read (frames count every
			// record, so compare with the reader's own counter).
			if r.Frame != 0 && r.Frame != pipe.Stats().Records {
				lagging++
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if lagging > 0 {
			t.Errorf("%s: %d records emitted after a later record was read, with nothing buffered", name, lagging)
		}
		if len(lines) != len(want) {
			t.Fatalf("%s: %d records with read-ahead, %d without", name, len(want), len(lines))
		}
		for i := range want {
			if want[i] != lines[i] {
				t.Fatalf("%s: record %d differs:\n  read-ahead %s\n  one by one %s", name, i, want[i], lines[i])
			}
		}
		if ahead.nexts != pipe.nexts || wantSum.Capture.Records == 0 {
			t.Errorf("%s: %d reads with read-ahead, %d without", name, ahead.nexts, pipe.nexts)
		}
	}
}

// resetMessage must clear every field except the datagram's own, so that a
// field added to Record later is not carried from one message to the next.
func TestResetMessageClearsEveryMessageField(t *testing.T) {
	datagramFields := map[string]bool{"Frame": true, "Time": true, "Src": true, "Dst": true,
		"Server": true, "Client": true, "Epoch": true, "Dir": true, "Peer": true, "MsgCount": true, "Datagram": true, "TCP": true}
	var r Record
	v := reflect.ValueOf(&r).Elem()
	r.hash, r.hashState = 7, hashDone // unexported: not settable through reflect
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64, reflect.Uint8, reflect.Uint32:
			if f.CanInt() {
				f.SetInt(7)
			} else {
				f.SetUint(7)
			}
		case reflect.String:
			f.SetString("x")
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Interface:
			f.Set(reflect.ValueOf(errors.New("x")))
		case reflect.Struct:
			f.Set(reflect.ValueOf(fieldSample(t, f.Type())))
		default:
			t.Fatalf("field %s: kind %s not handled by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	r.resetMessage(KindDamaged, 3)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		switch {
		case name == "Kind" || name == "MsgIndex":
		case name == "hash": // PayloadHash's memory, valid only by hashState
		case datagramFields[name] && v.Field(i).IsZero():
			t.Errorf("resetMessage cleared the datagram field %s", name)
		case !datagramFields[name] && !v.Field(i).IsZero():
			t.Errorf("resetMessage kept the message field %s", name)
		}
	}
	if r.Kind != KindDamaged || r.MsgIndex != 3 {
		t.Errorf("kind %v index %d", r.Kind, r.MsgIndex)
	}
}

func fieldSample(t *testing.T, typ reflect.Type) any {
	switch typ {
	case reflect.TypeFor[time.Time]():
		return time.Unix(1, 0)
	case reflect.TypeFor[netip.AddrPort]():
		return netip.MustParseAddrPort("10.0.0.1:22101")
	case reflect.TypeFor[capture.TCPSegment]():
		return capture.TCPSegment{Valid: true, Seq: 1}
	}
	t.Fatalf("struct type %s not handled by this test", typ)
	return nil
}

// Stopped early (emit returning false, as -c COUNT does), Run must report
// the capture counters as they were when the last reported datagram was
// read, not as far as it read ahead: the same as reading one datagram at a
// time. Every stopping point of captures with skipped records, fragments,
// damage and GameSpy.
func TestStopEarlySummaryMatchesOneByOne(t *testing.T) {
	for _, path := range []string{"../../testdata/pcaps/lossy.pcap", "../../testdata/pcaps/damaged.pcap",
		"../../testdata/pcaps/duel.pcapng", "../../testdata/pcaps/join.pcap", "../../testdata/openbc/networked-battle.pcap"} {
		open := func(buffered bool) *countingSource {
			rd, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rd.Close() })
			return &countingSource{Reader: rd, buffered: buffered}
		}
		run := func(src Source, stopAt int) Summary {
			n := 0
			sum, err := Run(src, New(Options{}), func(*Record) bool { n++; return n < stopAt })
			if err != nil {
				t.Fatal(err)
			}
			return sum
		}
		total := run(open(false), 1<<30)
		records := total.Flow.Messages + total.Flow.GameSpy + total.Damage
		step := max(1, records/300) // the large captures at some 300 points
		for stop := 1; stop <= records+1; stop += step {
			// The Reader itself (read ahead through its own loop), and a
			// source that hides it (one datagram at a time).
			rd, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got := run(rd, stop)
			rd.Close()
			want := run(open(false), stop)
			if got != want {
				t.Fatalf("%s stopped at record %d:\n  read ahead %+v\n  one by one %+v", path, stop, got, want)
			}
		}
	}
}
