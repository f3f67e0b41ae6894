package measure_test

import (
	"encoding/json"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session/measure"
)

func measureFile(t *testing.T, path string) *measure.Measures {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := measure.NewBuilder()
	if _, err := flow.Run(r, flow.New(flow.Options{}), func(rec *flow.Record) bool { b.Add(rec); return true }); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

// On the bundled battle (a stock-shaped 4-player game) the measures show
// what the published stock figures say: downstream 0x2x updates every
// 100 ms per ship lane, upstream updates in the 0x8x/0x9x families,
// relayed events going to the others and not back to the sender.
func TestBattleMeasures(t *testing.T) {
	m := measureFile(t, "../../testdata/pcaps/battle.pcap")
	down := m.CadenceOf("S->C", measure.FamilySubsystems)
	if down == nil || down.Intervals < 100 {
		t.Fatalf("no S->C 0x20-bearing cadence: %+v", m.Cadence)
	}
	if down.P50MS < 90 || down.P50MS > 110 || down.P90MS < down.P50MS || down.P90MS > 150 {
		t.Errorf("S->C 0x2x cadence p50 %v ms, p90 %v ms; stock is 100 and 110", down.P50MS, down.P90MS)
	}
	up := m.FlagFamilies["C->S"]
	if up["0x8x"]+up["0x9x"] < up["0x2x"]+up["0x3x"] || up["0x8x"]+up["0x9x"] == 0 {
		t.Errorf("C->S families %v: stock upstream is dominated by 0x8x/0x9x", up)
	}
	if m.Bundling[1].Max < 2 || m.Bundling[1].Datagrams == 0 || m.Bundling[1].Counts[m.Bundling[1].Max] == 0 {
		t.Errorf("S->C messages per datagram: %+v", m.Bundling[1])
	}
	relayed := false
	for _, row := range m.Relay {
		if row.Opcode == "StartFiring" {
			relayed = row.ToOthers > 0 && row.ToSender == 0
		}
	}
	if !relayed {
		t.Errorf("StartFiring does not go to the others only: %+v", m.Relay)
	}
	// Stock's subsystem blocks are mostly full health (0xFF); blocks after
	// a packed position bit are not byte-aligned and only counted.
	sb := m.SubsystemBytes[1]
	if sb.Blocks == 0 || sb.Unaligned == 0 || sb.Share(0xFF) < 0.5 || m.SubsystemBytes[0].Blocks != 0 {
		t.Errorf("subsystem bytes: S->C %d blocks (%d unaligned), 0xFF %.2f; C->S %d blocks", sb.Blocks, sb.Unaligned, sb.Share(0xFF), m.SubsystemBytes[0].Blocks)
	}
	if len(m.ObjectIDs) == 0 {
		t.Error("no object ids")
	}
	if _, err := json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(m.Cadence, "", " ")
	t.Logf("cadence: %s\nfamilies %v\nbundling %+v\nrelay %d rows, deaths %d", js, m.FlagFamilies, m.Bundling, len(m.Relay), len(m.Deaths))
}
