package replay

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Describe decodes a datagram into one line per transport message, for
// logs and reports. plain is the decrypted datagram (or a GameSpy datagram
// in clear).
func Describe(plain []byte, dir game.Direction) []string {
	return describeWith(plain, dir, game.NewDecoder())
}

// describeWith is Describe decoding with dec, which knows the ship classes
// of the session's ObjCreate messages (see learnDatagram).
func describeWith(plain []byte, dir game.Direction, dec *game.Decoder) []string {
	if dissect.IsGameSpy(plain) {
		return []string{describeGameSpy(plain)}
	}
	var d dissect.Datagram
	err := d.Parse(plain)
	out := make([]string, 0, len(d.Messages)+1)
	for i := range d.Messages {
		out = append(out, fmt.Sprintf("peer=%02X %s", d.Peer, describeMessage(&d.Messages[i], dir, dec)))
	}
	if err != nil {
		out = append(out, fmt.Sprintf("DAMAGED after %d of %d messages: %v", len(d.Messages), d.Count, err))
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("peer=%02X (no messages)", d.Peer))
	}
	return out
}

// learnDatagram lets dec learn the ship classes of the ObjCreate messages
// in a plain datagram.
func learnDatagram(dec *game.Decoder, plain []byte, dir game.Direction) {
	if dissect.IsGameSpy(plain) {
		return
	}
	var d dissect.Datagram
	_ = d.Parse(plain)
	for i := range d.Messages {
		if m := &d.Messages[i]; m.Type == dissect.TypeData && !m.Fragment {
			learn(dec, m.Payload, dir)
		}
	}
}

func describeGameSpy(b []byte) string {
	g, err := dissect.ParseGameSpy(b)
	if err != nil {
		return fmt.Sprintf("gamespy (damaged: %v) %q", err, b)
	}
	var sb strings.Builder
	sb.WriteString("gamespy")
	if g.Query {
		sb.WriteString(" query " + g.Kind)
		return sb.String()
	}
	sb.WriteString(" reply")
	if g.QueryID != "" {
		sb.WriteString(" queryid=" + g.QueryID)
	}
	for _, f := range g.Fields {
		sb.WriteString(" " + f.Key + "=" + strconv.Quote(f.Value))
	}
	return sb.String()
}

// describeMessage is the one-line form of a transport message.
func describeMessage(m *dissect.Message, dir game.Direction, dec *game.Decoder) string {
	var sb strings.Builder
	sb.WriteString(m.Type.String())
	if m.Type == dissect.TypeAck {
		fmt.Fprintf(&sb, " seq=%d flags=%#02x", m.Seq, m.AckFlags)
		if m.AckFlags&dissect.AckFragment != 0 {
			fmt.Fprintf(&sb, " frag=%d", m.AckFragIndex)
		}
		return sb.String()
	}
	if m.Reliable {
		fmt.Fprintf(&sb, " R seq=%d", m.Seq)
	} else {
		sb.WriteString(" U")
	}
	if m.Ordered {
		sb.WriteString(" O")
	}
	if m.Type != dissect.TypeData {
		c, err := dissect.ParseControl(m)
		if err != nil {
			fmt.Fprintf(&sb, "  raw % X", m.Payload)
			return sb.String()
		}
		sb.WriteString("  " + c.String())
		return sb.String()
	}
	if m.Fragment {
		if m.HasTotal() {
			fmt.Fprintf(&sb, " frag=0/%d", m.FragTotal)
		} else {
			fmt.Fprintf(&sb, " frag=%d", m.FragIndex)
		}
		if m.FragIndex == 0 && len(m.Payload) > 0 {
			fmt.Fprintf(&sb, "  %s (first %d bytes)", game.Opcode(m.Payload[0]), len(m.Payload))
		} else {
			fmt.Fprintf(&sb, "  (%d bytes)", len(m.Payload))
		}
		return sb.String()
	}
	sb.WriteString("  " + gameString(m.Payload, dir, dec))
	return sb.String()
}

func gameString(payload []byte, dir game.Direction, dec *game.Decoder) string {
	if len(payload) == 0 {
		return "(empty game message)"
	}
	r := dec.Decode(payload, dir)
	s := r.Msg.Opcode().String()
	if t := r.Msg.String(); t != "" {
		s += " " + t
	}
	if r.Err != nil {
		s += " (error: " + r.Err.Error() + ")"
	}
	if len(r.Unparsed) > 0 {
		s += fmt.Sprintf(" unparsed=%X", r.Unparsed)
	}
	return s
}

// SideBySide lays two decodings out in two columns headed left and right.
func SideBySide(leftHead string, left []string, rightHead string, right []string) string {
	w := len(leftHead)
	for _, l := range left {
		w = max(w, utf8.RuneCountInString(l))
	}
	w = min(w, 70)
	var sb strings.Builder
	row := func(a, b string) {
		mark := "  "
		if a != b {
			mark = "≠ "
		}
		// Nothing is cut: a long value goes on over more rows, each side
		// in its own column, so the field that differs is always shown.
		as, bs := wrap(a, w), wrap(b, max(w, 70))
		for i := 0; i < max(len(as), len(bs)); i++ {
			var x, y string
			if i < len(as) {
				x = as[i]
			}
			if i < len(bs) {
				y = bs[i]
			}
			pad := w - utf8.RuneCountInString(x)
			fmt.Fprintf(&sb, "    %s%s%s | %s\n", mark, x, strings.Repeat(" ", max(pad, 0)), y)
			mark = "  "
		}
	}
	fmt.Fprintf(&sb, "      %-*s | %s\n", w, leftHead, rightHead)
	for i := 0; i < max(len(left), len(right)); i++ {
		var a, b string
		if i < len(left) {
			a = left[i]
		}
		if i < len(right) {
			b = right[i]
		}
		row(a, b)
	}
	return sb.String()
}

// wrap splits s into rows of at most w characters, breaking after a space
// when one falls in the row's second half.
func wrap(s string, w int) []string {
	r := []rune(s)
	if len(r) <= w {
		return []string{s}
	}
	var out []string
	for len(r) > w {
		cut := w
		for i := w; i > w/2; i-- {
			if r[i-1] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = r[cut:]
	}
	return append(out, string(r))
}
