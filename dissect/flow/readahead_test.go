package flow

import (
	"fmt"
	"testing"

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
