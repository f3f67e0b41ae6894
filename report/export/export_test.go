package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
	"github.com/parquet-go/parquet-go"
)

// TestExportRoundTrip writes the bundled battle capture's records and
// sessions and reads the files back: one row per record, in order, with
// the columns of decode --json, and one row per session.
func TestExportRoundTrip(t *testing.T) {
	const file = "../../testdata/pcaps/battle.pcap"
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rows Rows
	var frames []int64
	var fields []string // each row's fields text as made (the text block is reused)
	stateUpdates, withSpeed := 0, 0
	sessions := 0
	_, err = session.Scan(rd, session.ScanOptions{Kept: session.RecordFunc(func(r *flow.Record) {
		row, err := w.NextMessage(file, r.Time.UTC())
		if err != nil {
			t.Fatal(err)
		}
		rows.MessageRowOf(row, file, r)
		frames = append(frames, row.Frame)
		if row.Fields != nil {
			fields = append(fields, strings.Clone(*row.Fields))
		} else {
			fields = append(fields, "")
		}
		if row.Name != nil && *row.Name == "StateUpdate" {
			stateUpdates++
			if row.Speed != nil {
				withSpeed++
			}
		}
	})}, func(s *session.Session) error {
		sessions++
		var sr SessionRow
		SessionRowOf(&sr, file, s)
		return w.Session(sr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	part := "part-" + FileKey(file) + ".parquet"
	msgs, err := parquet.ReadFile[MessageRow](filepath.Join(dir, "messages", "capture=battle.pcap", "date=2026-01-10", part))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != len(frames) {
		t.Fatalf("%d rows read back, %d written", len(msgs), len(frames))
	}
	gotSU, gotSpeed := 0, 0
	for i, m := range msgs {
		if m.Frame != frames[i] {
			t.Fatalf("row %d: frame %d, wrote %d", i, m.Frame, frames[i])
		}
		if m.Fields != nil && *m.Fields != fields[i] || m.Fields == nil && fields[i] != "" {
			t.Fatalf("row %d: fields %v, wrote %q", i, m.Fields, fields[i])
		}
		if m.Kind == "message" && (m.Type == nil || m.Peer == nil || m.Src == "" || m.Dir == "?") {
			t.Fatalf("row %d: message without type, peer or addresses: %+v", i, m)
		}
		if m.Name != nil && *m.Name == "StateUpdate" {
			gotSU++
			if m.Object == nil || m.Flags == nil || m.GameTime == nil || m.Fields == nil {
				t.Fatalf("row %d: StateUpdate without its typed columns: %+v", i, m)
			}
			if m.Speed != nil {
				gotSpeed++
			}
		}
		if m.Time.Before(time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("row %d: time %v", i, m.Time)
		}
	}
	if gotSU != stateUpdates || gotSpeed != withSpeed || gotSU == 0 || gotSpeed == 0 {
		t.Errorf("StateUpdates read back %d (%d with speed), written %d (%d)", gotSU, gotSpeed, stateUpdates, withSpeed)
	}
	ss, err := parquet.ReadFile[SessionRow](filepath.Join(dir, "sessions", "capture=battle.pcap", part))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != sessions || sessions != 4 {
		t.Fatalf("%d session rows, %d sessions", len(ss), sessions)
	}
	for _, s := range ss {
		if s.Client == "" || s.StateUpdateC2S == 0 || s.Join == nil || *s.Join <= 0 {
			t.Errorf("session row %+v", s)
		}
	}
}
