package session

import (
	"errors"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

func TestScan(t *testing.T) {
	open := func() *capture.Reader {
		rd, err := capture.Open("../testdata/pcaps/battle.pcap")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		return rd
	}
	var names []string
	records := 0
	res, err := Scan(open(), ScanOptions{Kept: RecordFunc(func(*flow.Record) { records++ })}, func(s *Session) error {
		names = append(names, s.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 4 || len(names) != 4 || res.Damaged != 0 || res.Peak != 4 {
		t.Errorf("%d sessions (%v), peak %d, %d damaged; want the battle's 4 players", res.Sessions, names, res.Peak, res.Damaged)
	}
	if records == 0 || res.Summary.Flow.Messages == 0 || res.Totals.Datagrams[0]+res.Totals.Datagrams[1] != res.Summary.Flow.Datagrams {
		t.Errorf("records %d, summary %+v, totals %v", records, res.Summary.Flow, res.Totals.Datagrams)
	}
	// The same with workers.
	par, err := Scan(open(), ScanOptions{Workers: 2}, func(*Session) error { return nil })
	if err != nil || par.Sessions != res.Sessions || par.Totals.Datagrams != res.Totals.Datagrams {
		t.Errorf("workers: %v, %d sessions, %v datagrams", err, par.Sessions, par.Totals.Datagrams)
	}
	// An emit error stops the scan and is returned.
	stop := errors.New("stop")
	if _, err := Scan(open(), ScanOptions{}, func(*Session) error { return stop }); err != stop {
		t.Errorf("emit error: %v", err)
	}
}

// TestScanHooks checks what each hook sees: Damaged every damaged record,
// kept or not, before Kept; Kept the records Keep keeps, after the
// Builder; and that Tick returning false stops the scan at the 1024th
// record.
func TestScanHooks(t *testing.T) {
	open := func(name string) *capture.Reader {
		rd, err := capture.Open("../testdata/pcaps/" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		return rd
	}
	var all, damaged, kept, keptDamaged, order int
	res, err := Scan(open("damaged.pcap"), ScanOptions{
		Keep: func(r *flow.Record) bool { all++; return r.Err != nil || r.Dir == game.ClientToServer },
		Damaged: func(r *flow.Record) {
			if r.Err == nil {
				t.Errorf("Damaged saw an intact record (frame %d)", r.Frame)
			}
			damaged++
			order = r.Frame
		},
		Kept: RecordFunc(func(r *flow.Record) {
			if r.Err == nil && r.Dir != game.ClientToServer {
				t.Errorf("Kept saw a record Keep left (frame %d)", r.Frame)
			}
			if r.Err != nil {
				keptDamaged++
				if order != r.Frame {
					t.Errorf("frame %d: Kept before Damaged", r.Frame)
				}
			}
			kept++
		}),
	}, func(*Session) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if damaged != res.Damaged || damaged == 0 || keptDamaged != damaged || kept >= all {
		t.Errorf("Damaged saw %d of %d damaged records; Kept %d of %d records, %d damaged", damaged, res.Damaged, kept, all, keptDamaged)
	}

	ticks, records := 0, 0
	_, err = Scan(open("battle.pcap"), ScanOptions{
		Kept: RecordFunc(func(*flow.Record) { records++ }),
		Tick: func() bool { ticks++; return false },
	}, func(*Session) error { return nil })
	if err != nil || ticks != 1 || records != 1024 {
		t.Errorf("Tick false at the first call: %v, %d ticks, %d records scanned (want 1 and 1024)", err, ticks, records)
	}
}
