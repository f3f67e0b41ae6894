package replay

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Comparer decides whether a game message the server under test sent
// (ours) says the same as the captured one (stock). The verifier calls it
// for every pair of decoded game messages that are not byte-identical.
type Comparer interface {
	Compare(ours, stock game.Message) (equivalent bool, detail string)
}

// DefaultComparer holds two messages equivalent when they encode to the
// same bytes once the host's game clock (Settings and StateUpdate game
// time) is set aside: field-for-field equality of the decoded values.
type DefaultComparer struct{}

// Compare implements Comparer.
func (DefaultComparer) Compare(ours, stock game.Message) (bool, string) {
	if ours.Opcode() != stock.Opcode() {
		return false, fmt.Sprintf("opcode %s, captured %s", ours.Opcode(), stock.Opcode())
	}
	a, b := withoutClock(ours), withoutClock(stock)
	if bytes.Equal(a, b) {
		return true, ""
	}
	return false, fmt.Sprintf("%s fields differ: %s | captured: %s", ours.Opcode(), ours.String(), stock.String())
}

// withoutClock encodes m with its game-time field zeroed.
func withoutClock(m game.Message) []byte {
	switch v := m.(type) {
	case *game.Settings:
		c := *v
		c.GameTime = 0
		return c.Append(nil)
	case *game.StateUpdate:
		c := *v
		c.GameTime = 0
		return c.Append(nil)
	}
	return m.Append(nil)
}

// compareDatagrams compares a received datagram with the captured one once
// both are decoded: the same transport messages in the same order, control
// payloads equal once address fields are set aside, game messages
// equivalent under cmp. Both are plaintext (or GameSpy in clear).
func compareDatagrams(got, want []byte, dir game.Direction, cmp Comparer) (bool, string) {
	if dissect.IsGameSpy(got) || dissect.IsGameSpy(want) {
		if !dissect.IsGameSpy(got) || !dissect.IsGameSpy(want) {
			return false, "a GameSpy datagram and a game datagram"
		}
		return compareGameSpy(got, want, cmp)
	}
	var g, w dissect.Datagram
	gerr, werr := g.Parse(got), w.Parse(want)
	if (gerr == nil) != (werr == nil) {
		return false, fmt.Sprintf("framing: received %v, captured %v", errText(gerr), errText(werr))
	}
	if gerr != nil {
		return bytes.Equal(masked(got), masked(want)), "damaged datagrams"
	}
	if g.Peer != w.Peer {
		return false, fmt.Sprintf("peer id %#02x, captured %#02x", g.Peer, w.Peer)
	}
	if len(g.Messages) != len(w.Messages) {
		return false, fmt.Sprintf("%d transport messages, captured %d", len(g.Messages), len(w.Messages))
	}
	gd, wd := game.NewDecoder(), game.NewDecoder()
	for i := range g.Messages {
		if ok, why := compareMessages(&g.Messages[i], &w.Messages[i], dir, cmp, gd, wd); !ok {
			return false, fmt.Sprintf("message %d: %s", i+1, why)
		}
	}
	return true, ""
}

func errText(err error) string {
	if err == nil {
		return "fine"
	}
	return err.Error()
}

// compareMessages compares two transport messages after decoding.
func compareMessages(a, b *dissect.Message, dir game.Direction, cmp Comparer, ad, bd *game.Decoder) (bool, string) {
	if a.Type != b.Type {
		return false, fmt.Sprintf("type %s, captured %s", a.Type, b.Type)
	}
	if a.Type == dissect.TypeAck {
		if a.Seq != b.Seq || a.AckFlags != b.AckFlags || a.AckFragIndex != b.AckFragIndex {
			return false, fmt.Sprintf("ACK seq=%d flags=%#02x, captured seq=%d flags=%#02x", a.Seq, a.AckFlags, b.Seq, b.AckFlags)
		}
		return true, ""
	}
	if a.Reliable != b.Reliable || a.Ordered != b.Ordered || a.Seq != b.Seq || a.Fragment != b.Fragment ||
		a.FragIndex != b.FragIndex || a.FragTotal != b.FragTotal {
		return false, fmt.Sprintf("header %s, captured %s", headerText(a), headerText(b))
	}
	return comparePayloads(a.Type, a.Fragment, a.Payload, b.Payload, dir, cmp, ad, bd)
}

// comparePayloads compares two message payloads of transport type t.
func comparePayloads(t dissect.TransportType, fragment bool, a, b []byte, dir game.Direction, cmp Comparer, ad, bd *game.Decoder) (bool, string) {
	if bytes.Equal(a, b) {
		return true, ""
	}
	switch {
	case t != dissect.TypeData:
		ma, mb := dissect.Message{Type: t, Payload: a}, dissect.Message{Type: t, Payload: b}
		ca, _ := dissect.ParseControl(&ma)
		cb, _ := dissect.ParseControl(&mb)
		// Set the address aside: compare the payloads with it zeroed.
		if ca.Kind == cb.Kind && bytes.Equal(maskControl(&ca), maskControl(&cb)) {
			return true, ""
		}
		return false, fmt.Sprintf("%s, captured %s", ca.String(), cb.String())
	case fragment || len(a) == 0 || len(b) == 0:
		return false, "fragment bytes differ"
	}
	ra, rb := ad.Decode(a, dir), bd.Decode(b, dir)
	if ra.Err != nil || rb.Err != nil {
		return false, fmt.Sprintf("game message %X, captured %X", a, b)
	}
	return cmp.Compare(ra.Msg, rb.Msg)
}

// judgePayloads is comparePayloads with configuration differences set
// apart when cmp can (configJudge).
func judgePayloads(t dissect.TransportType, a, b []byte, dir game.Direction, cmp Comparer, ad, bd *game.Decoder) verdict {
	if j, ok := cmp.(configJudge); ok && t == dissect.TypeData && !bytes.Equal(a, b) && len(a) > 0 && len(b) > 0 {
		ra := ad.Decode(a, dir)
		if ra.Err == nil {
			ma := ra.Msg
			if rb := bd.Decode(b, dir); rb.Err == nil {
				return j.judgeGame(ma, rb.Msg)
			}
		}
	}
	ok, detail := comparePayloads(t, false, a, b, dir, cmp, ad, bd)
	return verdict{ok: ok, detail: detail}
}

// judgeDatagrams is compareDatagrams with configuration differences set
// apart when cmp can: the same transport messages, protocol differences
// first, every configuration difference listed.
func judgeDatagrams(got, want []byte, dir game.Direction, cmp Comparer) verdict {
	if _, ok := cmp.(configJudge); !ok {
		ok, detail := compareDatagrams(got, want, dir, cmp)
		return verdict{ok: ok, detail: detail}
	}
	if dissect.IsGameSpy(got) && dissect.IsGameSpy(want) {
		return judgeGameSpyBytes(got, want, cmp)
	}
	var g, w dissect.Datagram
	if g.Parse(got) != nil || w.Parse(want) != nil || g.Peer != w.Peer || len(g.Messages) != len(w.Messages) {
		ok, detail := compareDatagrams(got, want, dir, cmp)
		return verdict{ok: ok, detail: detail}
	}
	var v verdict
	v.ok = true
	gd, wd := game.NewDecoder(), game.NewDecoder()
	for i := range g.Messages {
		a, b := &g.Messages[i], &w.Messages[i]
		if a.Type == dissect.TypeData && b.Type == dissect.TypeData && !a.Fragment && !b.Fragment &&
			a.Reliable == b.Reliable && a.Ordered == b.Ordered && a.Seq == b.Seq {
			mv := judgePayloads(a.Type, a.Payload, b.Payload, dir, cmp, gd, wd)
			v.config = append(v.config, mv.config...)
			if !mv.ok && v.ok {
				v.ok, v.detail = false, fmt.Sprintf("message %d: %s", i+1, mv.detail)
			}
			continue
		}
		if ok, why := compareMessages(a, b, dir, cmp, gd, wd); !ok && v.ok {
			v.ok, v.detail = false, fmt.Sprintf("message %d: %s", i+1, why)
		}
	}
	return v
}

func maskControl(c *dissect.Control) []byte {
	m := *c
	m.Addr = netipZero4
	m.Port = 0
	return dissect.AppendControl(nil, &m)
}

var netipZero4 = netip.AddrFrom4([4]byte{})

func headerText(m *dissect.Message) string {
	s := "U"
	if m.Reliable {
		s = fmt.Sprintf("R seq=%d", m.Seq)
	}
	if m.Ordered {
		s += " O"
	}
	if m.Fragment {
		s += fmt.Sprintf(" frag=%d/%d", m.FragIndex, m.FragTotal)
	}
	return s
}
