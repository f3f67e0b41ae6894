package synth

import (
	"bytes"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

func generate(t *testing.T, cfg Config, format capture.Format, link capture.LinkType) ([]byte, Manifest) {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, format, link)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Generate(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// decodeCounts decodes a capture with the dissector and counts complete game
// messages per direction and opcode.
func decodeCounts(t *testing.T, b []byte) (map[CountKey]int, flow.Summary, []string) {
	t.Helper()
	rd, err := capture.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[CountKey]int{}
	var problems []string
	sum, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Err != nil || r.Warning != "" {
			problems = append(problems, r.Time.Format("15:04:05.000")+" "+r.Dir.String()+": "+r.Warning+" "+errString(r.Err))
		}
		if r.Game != nil {
			counts[CountKey{r.Dir, r.Game.Msg.Opcode()}]++
			if len(r.Game.Unparsed) > 0 {
				problems = append(problems, "unparsed bytes in "+r.Game.Msg.Opcode().String())
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, sum, problems
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestGeneratedCapturesDecodeToTheManifest(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"one player", Config{Players: 1, Duration: 10 * time.Second, Seed: 3}},
		{"four players", Config{Players: 4, Duration: 40 * time.Second, Seed: 1}},
		{"lossy", Config{Players: 3, Duration: 40 * time.Second, Seed: 5, Loss: 0.05}},
		{"sixteen players", Config{Players: 16, Duration: 20 * time.Second, Seed: 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, man := generate(t, c.cfg, capture.PCAP, capture.Ethernet)
			counts, sum, problems := decodeCounts(t, b)
			if len(problems) > 0 {
				t.Fatalf("%d problems, first: %s", len(problems), problems[0])
			}
			if sum.Damage != 0 || sum.Flow.Datagrams+sum.Flow.GameSpy != man.Datagrams {
				t.Fatalf("damage %d, datagrams decoded %d+%d, written %d", sum.Damage, sum.Flow.Datagrams, sum.Flow.GameSpy, man.Datagrams)
			}
			for k, n := range man.Opcodes {
				if counts[k] != n {
					t.Errorf("%v %v: decoded %d, generator wrote %d", k.Dir, k.Opcode, counts[k], n)
				}
			}
			for k, n := range counts {
				if man.Opcodes[k] == 0 {
					t.Errorf("%v %v: decoded %d the generator did not write", k.Dir, k.Opcode, n)
				}
			}
			if c.cfg.Loss > 0 && (man.Lost == 0 || man.Retransmits == 0) {
				t.Errorf("loss %v: %d lost, %d retransmits", c.cfg.Loss, man.Lost, man.Retransmits)
			}
		})
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	cfg := Config{Players: 3, Duration: 15 * time.Second, Seed: 42, Loss: 0.02}
	a, _ := generate(t, cfg, capture.PCAPNG, capture.LinuxSLL)
	b, _ := generate(t, cfg, capture.PCAPNG, capture.LinuxSLL)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same config differ")
	}
	cfg.Seed = 43
	c, _ := generate(t, cfg, capture.PCAPNG, capture.LinuxSLL)
	if bytes.Equal(a, c) {
		t.Fatal("a different seed gave the same capture")
	}
}

// The stock traffic shape: the join sequence in the right order, the stock
// bundles, and the StateUpdate flag split by direction.
func TestStockShape(t *testing.T) {
	b, _ := generate(t, Config{Players: 2, Duration: 20 * time.Second, Seed: 1}, capture.PCAP, capture.Ethernet)
	rd, _ := capture.NewReader(bytes.NewReader(b))
	var joinOps []game.Opcode
	bundles := map[int][]game.Opcode{} // frame -> opcodes in it, first client only
	first := ""
	flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Game == nil {
			return true
		}
		if first == "" {
			first = r.Client.String()
		}
		op := r.Game.Msg.Opcode()
		if su, ok := r.Game.Msg.(*game.StateUpdate); ok {
			if r.Dir == game.ClientToServer && (su.Flags&game.StateSubsystems != 0 || su.Flags&game.StateWeapons == 0) {
				t.Errorf("frame %d: C->S StateUpdate flags %v", r.Frame, su.Flags)
			}
			if r.Dir == game.ServerToClient && (su.Flags&game.StateWeapons != 0 || su.Flags&game.StateSubsystems == 0) {
				t.Errorf("frame %d: S->C StateUpdate flags %v", r.Frame, su.Flags)
			}
			return true
		}
		if r.Client.String() == first && r.Dir == game.ServerToClient {
			joinOps = append(joinOps, op)
			bundles[r.Frame] = append(bundles[r.Frame], op)
		}
		return true
	})
	want := []game.Opcode{game.OpChecksumRequest, game.OpChecksumRequest, game.OpChecksumRequest, game.OpChecksumRequest,
		game.OpChecksumRequest, game.OpChecksumComplete, game.OpSettings, game.OpGameInit, game.OpMissionInit}
	for i, op := range want {
		if i >= len(joinOps) || joinOps[i] != op {
			t.Fatalf("join sequence %v, want it to start %v", joinOps, want)
		}
	}
	found := false
	for _, ops := range bundles {
		if len(ops) == 3 && ops[0] == game.OpChecksumComplete && ops[1] == game.OpSettings && ops[2] == game.OpGameInit {
			found = true
		}
	}
	if !found {
		t.Error("0x28, Settings and GameInit never share one datagram")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{{Players: 17}, {Players: -1}, {Duration: time.Second}, {Loss: 0.9}} {
		var buf bytes.Buffer
		w, _ := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
		if _, err := Generate(cfg, w); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
