package session

import (
	"errors"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
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
