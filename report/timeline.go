package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/bcwire/bcwire/session"
	"github.com/fatih/color"
)

// TimelinePrinter writes `bcwire timeline` output, one session at a time as
// sessions end. The text form lists each session's join phases with their
// offset from the session's first packet and the time since the previous
// phase, merged with its notable events and chat, then its reliable-delivery
// figures. The JSON form is {"sessions":[…]}, one session object per line,
// each the session package's JSON with a "file" key added.
type TimelinePrinter struct {
	w     *bufio.Writer
	json  bool
	pal   palette
	chat  func(a ...interface{}) string
	count int
}

// NewTimelinePrinter returns a printer writing to w: JSON when asJSON, else
// text (colored when useColor). Call Close at the end.
func NewTimelinePrinter(w io.Writer, asJSON, useColor bool) *TimelinePrinter {
	p := &TimelinePrinter{w: bufio.NewWriterSize(w, 64<<10), json: asJSON}
	p.pal = newPalette(useColor && !asJSON)
	p.chat = fmt.Sprint
	if useColor && !asJSON {
		c := color.New(color.FgGreen)
		c.EnableColor()
		p.chat = c.SprintFunc()
	}
	return p
}

type timelineJSON struct {
	File string `json:"file"`
	*session.Session
}

// Session writes one session.
func (p *TimelinePrinter) Session(file string, s *session.Session) error {
	p.count++
	if p.json {
		if p.count == 1 {
			p.w.WriteString("{\"sessions\":[\n")
		} else {
			p.w.WriteString(",\n")
		}
		b, err := marshalJSON(timelineJSON{File: file, Session: s})
		if err != nil {
			return err
		}
		_, err = p.w.Write(b)
		return err
	}
	p.header(file, s)
	for _, l := range timelineLines(s) {
		p.line(s, l)
	}
	p.reliability(s)
	p.facts(s)
	_, err := p.w.WriteString("\n")
	return err
}

// Close ends the output.
func (p *TimelinePrinter) Close() error {
	if p.json {
		if p.count == 0 {
			p.w.WriteString("{\"sessions\":[")
		} else {
			p.w.WriteString("\n")
		}
		p.w.WriteString("]}\n")
	} else if p.count == 0 {
		p.w.WriteString("no sessions\n")
	}
	return p.w.Flush()
}

func (p *TimelinePrinter) header(file string, s *session.Session) {
	title := fmt.Sprintf("%s on %s", s.Client, s.Server)
	if s.Slot >= 0 {
		title += fmt.Sprintf("  slot %d", s.Slot)
	}
	if s.Name != "" {
		title += fmt.Sprintf("  %q", s.Name)
	}
	if s.Ship != "" {
		title += "  " + s.Ship
	}
	if s.Team >= 0 {
		title += fmt.Sprintf("  team %d", s.Team)
	}
	fmt.Fprintf(p.w, "%s\n", p.pal.name(title))
	fmt.Fprintf(p.w, "  %s: %s, %s, reached %s, %s\n", file, clock(s.Start), roundDur(s.Duration()), s.Reached, endText(s))
	if s.MidCapture {
		fmt.Fprintf(p.w, "  %s\n", p.pal.dim("already under way when the capture started: earlier phases are not in it"))
	}
}

// tlLine is one line of a timeline: a phase, an event or a chat line.
type tlLine struct {
	t     time.Time
	phase bool
	kind  string // event kind; "chat" for chat
	text  string
	note  string // right column: the time since the previous phase, an RTT
	frame int
}

func timelineLines(s *session.Session) []tlLine {
	var lines []tlLine
	ph := func(t *time.Time, text string) {
		if t != nil {
			lines = append(lines, tlLine{t: *t, phase: true, text: text})
		}
	}
	p := s.Phases
	ph(p.Connect, "connect request")
	reply := "connect reply"
	if s.Slot >= 0 {
		reply += fmt.Sprintf(": slot %d", s.Slot)
	}
	ph(p.ConnectReply, reply)
	for _, c := range s.Checksums {
		ph(c.Request, fmt.Sprintf("checksum round %s requested", c.Round))
		if c.Response != nil {
			l := tlLine{t: *c.Response, phase: true, text: fmt.Sprintf("checksum round %s answered", c.Round)}
			if c.Request != nil {
				l.note = "rtt " + roundDur(c.RTT())
			}
			lines = append(lines, l)
		}
	}
	ph(p.ChecksumDone, "checksums passed")
	ph(p.Lobby, "lobby: settings received")
	ph(p.NewPlayer, "new player in game")
	ph(p.MissionInit, "mission init")
	inGame := "in game: ship selected"
	for _, f := range s.Inferred {
		if f == "in_game" {
			inGame = "in game (inferred from the client's first StateUpdate)"
		}
	}
	ph(p.InGame, inGame)
	ph(p.FirstStateUpdate, "first StateUpdate from the client")
	if p.End != nil {
		text := "end: " + string(s.EndReason)
		for _, e := range s.Events {
			if isEndEvent(e.Kind) {
				text = "end: " + e.Text
			}
		}
		ph(p.End, text)
	}
	// Phases in protocol order; a stable sort by time keeps that order for
	// phases at the same instant (ChecksumComplete, Settings and GameInit
	// share a datagram).
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].t.Before(lines[j].t) })
	var prev *time.Time
	for i := range lines {
		if prev != nil && lines[i].note == "" && lines[i].t.After(*prev) {
			lines[i].note = "+" + roundDur(lines[i].t.Sub(*prev))
		}
		prev = &lines[i].t
	}
	for _, e := range s.Events {
		if !isEndEvent(e.Kind) {
			lines = append(lines, tlLine{t: e.Time, kind: e.Kind, text: e.Text, frame: e.Frame})
		}
	}
	// One line per kind of non-stock message, however many there are.
	for _, k := range s.NonStock {
		text := fmt.Sprintf("non-stock %s: %s %s, %d from frame %d to %d", k.Name, k.Message, k.Dir, k.Count, k.FirstFrame, k.LastFrame)
		if k.Count == 1 {
			text = fmt.Sprintf("non-stock %s: %s %s", k.Name, k.Message, k.Dir)
		}
		lines = append(lines, tlLine{t: k.FirstTime, kind: kindNonStock, text: text, frame: k.FirstFrame})
	}
	for _, c := range s.Chat {
		scope := "all"
		if c.Team {
			scope = "team"
		}
		who := c.Sender
		if who == "" {
			who = fmt.Sprintf("player %d", c.SenderID)
		}
		lines = append(lines, tlLine{t: c.Time, kind: "chat", text: fmt.Sprintf("chat [%s] %s: %q", scope, who, c.Text), frame: c.Frame})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].t.Before(lines[j].t) })
	return lines
}

// kindNonStock is the tlLine kind of a non-stock kind's line.
const kindNonStock = "nonstock"

func isEndEvent(kind string) bool {
	switch kind {
	case session.EventDisconnect, session.EventBoot, session.EventTimeout, session.EventReconnect:
		return true
	}
	return false
}

func (p *TimelinePrinter) line(s *session.Session, l tlLine) {
	off := p.pal.dim(offset(l.t.Sub(s.Start)))
	text := l.text
	switch {
	case l.phase:
		text = p.pal.name(text)
	case l.kind == "chat":
		text = "  " + p.chat(text)
	case l.kind == session.EventDamaged || l.kind == session.EventChecksumFail:
		text = "  " + p.pal.err(text)
	case l.kind == session.EventRetransmitBurst || l.kind == kindNonStock:
		text = "  " + p.pal.warn(text)
	default:
		text = "  " + text
	}
	note := l.note
	if l.frame > 0 && !l.phase {
		note = fmt.Sprintf("frame %d", l.frame)
	}
	if note == "" {
		fmt.Fprintf(p.w, "  %s  %s\n", off, text)
		return
	}
	pad := 48 - visibleLen(l.text)
	if !l.phase {
		pad -= 2
	}
	fmt.Fprintf(p.w, "  %s  %s%s  %s\n", off, text, strings.Repeat(" ", max(pad, 0)), p.pal.dim(note))
}

// visibleLen counts runes (the text has no color codes yet).
func visibleLen(s string) int { return len([]rune(s)) }

// offset shows a duration from the session's start as +MM:SS.mmm, or
// +H:MM:SS.mmm past an hour.
func offset(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	ms := d.Milliseconds()
	h, m, sec, milli := ms/3600000, ms/60000%60, ms/1000%60, ms%1000
	if h > 0 {
		return fmt.Sprintf("+%d:%02d:%02d.%03d", h, m, sec, milli)
	}
	return fmt.Sprintf("+%02d:%02d.%03d", m, sec, milli)
}

func (p *TimelinePrinter) reliability(s *session.Session) {
	fmt.Fprintf(p.w, "  %-14s %8s %6s %5s %7s %5s %7s %5s %7s  %s\n", "reliability", "reliable", "retx", "dup",
		"unacked", "gaps", "missing", "late", "unrel.", "ack rtt min/median/p95/max")
	row := func(name string, c session.ChannelStats) {
		if c.Reliable+c.Unreliable+c.UnmatchedAcks == 0 {
			return
		}
		rtt := "-"
		if r := c.RTT; r.Samples > 0 {
			rtt = fmt.Sprintf("%s/%s/%s/%s (%d)", msText(r.Min), msText(r.Median), msText(r.P95), msText(r.Max), r.Samples)
		}
		line := fmt.Sprintf("  %-14s %8d %6d %5d %7d %5d %7d %5d %7d  %s", name, c.Reliable, c.Retransmissions,
			c.Duplicates, c.Unacked, c.Gaps, c.Missing, c.OutOfOrder, c.Unreliable, rtt)
		if c.Retransmissions+c.Unacked+c.Missing > 0 {
			line = p.pal.warn(line)
		}
		fmt.Fprintln(p.w, line)
	}
	r := &s.Reliability
	row("C->S data", r.ClientToServer.Data)
	row("C->S control", r.ClientToServer.Control)
	row("S->C data", r.ServerToClient.Data)
	row("S->C control", r.ServerToClient.Control)
}

func msText(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// facts writes the session's one-line summaries: score, ships, keepalives,
// StateUpdate rates, relays, dropped list entries.
func (p *TimelinePrinter) facts(s *session.Session) {
	var parts []string
	if s.Score != (session.Score{}) {
		parts = append(parts, fmt.Sprintf("score %d kills, %d deaths, %d points", s.Score.Kills, s.Score.Deaths, s.Score.Score))
	}
	if s.ShipsCreated+s.ShipsDestroyed > 0 {
		parts = append(parts, fmt.Sprintf("ships %d created, %d destroyed", s.ShipsCreated, s.ShipsDestroyed))
	}
	if len(parts) > 0 {
		fmt.Fprintf(p.w, "  %s\n", strings.Join(parts, "; "))
	}
	ka := func(who string, iv session.Interval) string {
		if iv.Count < 2 {
			return fmt.Sprintf("%s %d", who, iv.Count)
		}
		return fmt.Sprintf("%s every %s (%s-%s)", who, roundDur(iv.Mean), roundDur(iv.Min), roundDur(iv.Max))
	}
	if s.Keepalive.Client.Count+s.Keepalive.Server.Count > 0 {
		fmt.Fprintf(p.w, "  keepalives: %s, %s\n", ka("C->S", s.Keepalive.Client), ka("S->C", s.Keepalive.Server))
	}
	if len(s.StateUpdates) > 0 {
		var rates []string
		for _, u := range s.StateUpdates {
			rates = append(rates, fmt.Sprintf("0x%08X %s %d (%.1f/s)", uint32(u.Object), u.Dir, u.Count, u.PerSecond))
		}
		fmt.Fprintf(p.w, "  StateUpdates: %s\n", strings.Join(rates, ", "))
	}
	if r := s.Relay; r.Messages+r.Received > 0 {
		fmt.Fprintf(p.w, "  relayed: %d of the client's messages to %.1f other clients each; %d copies of others' messages received\n",
			r.Messages, r.FanOut, r.Received)
	}
	if s.EventsDropped+s.ChatDropped > 0 {
		fmt.Fprintf(p.w, "  %s\n", p.pal.warn(fmt.Sprintf("not listed: %d events, %d chat lines", s.EventsDropped, s.ChatDropped)))
	}
	if s.Damaged > 0 {
		fmt.Fprintf(p.w, "  %s\n", p.pal.err(fmt.Sprintf("%d damaged records", s.Damaged)))
	}
	if s.NonStockDropped > 0 {
		fmt.Fprintf(p.w, "  %s\n", p.pal.warn(fmt.Sprintf("%d non-stock messages of kinds not listed", s.NonStockDropped)))
	}
}
