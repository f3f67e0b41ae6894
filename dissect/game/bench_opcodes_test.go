package game_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

type dirMsg struct {
	dir game.Direction
	p   []byte
}

// battleMessages collects every complete game message of battle.pcap by
// opcode, with its direction.
func battleMessages(b *testing.B) map[game.Opcode][]dirMsg {
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	out := map[game.Opcode][]dirMsg{}
	tr := flow.New(flow.Options{})
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			b.Fatal(err)
		}
		tr.Datagram(p.Frame, p.Time, p.Src, p.Dst, p.Payload, func(r *flow.Record) {
			if r.Game == nil || r.Err != nil || r.Reassembled > 0 {
				return
			}
			op := r.Game.Msg.Opcode()
			out[op] = append(out[op], dirMsg{r.Dir, append([]byte(nil), r.Msg.Payload...)})
		})
	}
}

// BenchmarkOpcodes decodes the real messages of each opcode in the battle
// capture (one sub-benchmark per opcode; bytes are the messages' bytes).
// Each decoder has first seen the capture's ObjCreate messages, as in a
// whole-capture run, so StateUpdate decodes its subsystem states by class.
func BenchmarkOpcodes(b *testing.B) {
	msgs := battleMessages(b)
	for op := range 256 {
		ms := msgs[game.Opcode(op)]
		if len(ms) == 0 {
			continue
		}
		b.Run(game.Opcode(op).String(), func(b *testing.B) {
			d := game.NewDecoder()
			for _, op := range []game.Opcode{game.OpObjCreate, game.OpObjCreateTeam} {
				for _, m := range msgs[op] {
					d.Decode(m.p, m.dir)
				}
			}
			n := 0
			for _, m := range ms {
				n += len(m.p)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, m := range ms {
					d.Decode(m.p, m.dir)
				}
			}
		})
	}
}
