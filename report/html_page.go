package report

// What the page template shows: cards, tables and the chat log, built
// from the sessions kept.

import (
	"fmt"
	"html/template"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

// page is what the template shows.
type page struct {
	Title     string
	Files     []string
	Range     string
	Generated string
	Cards     []card
	Notes     []string

	Gantt, Rates, Bandwidth, RTT template.HTML

	Sessions  []sessionRow
	Opcodes   []opcodeRow
	Transport []transportRow
	GameSpy   []session.GameSpyRow
	NonStock  []session.NonStockRow
	Chat      []chatRow
	ChatLost  int
}

type card struct{ Label, Value string }

type sessionRow struct {
	Player, Client, File, Slot, Team, Ship, Reached, ReachedColor, Start, Duration, End, Score string
}

type opcodeRow struct {
	Hex, Name, Group, Color string
	Count, Bytes            [2]string
	// Share is the opcode's part of all game messages (both directions),
	// as a CSS width; ShareText the same for people.
	Share, ShareText string
}

type transportRow struct {
	Hex, Name    string
	Count, Bytes [2]string
}

type chatRow struct {
	t      time.Time
	line   session.ChatLine
	Player string // the session it was seen in
}

func (c chatRow) Time() string { return c.t.UTC().Format("15:04:05.000") }
func (c chatRow) Sender() string {
	if c.line.Sender != "" {
		return c.line.Sender
	}
	return fmt.Sprintf("player %d", c.line.SenderID)
}
func (c chatRow) Scope() string {
	if c.line.Team {
		return "team"
	}
	return "all"
}
func (c chatRow) Text() string { return c.line.Text }
func (c chatRow) Frame() int   { return c.line.Frame }

func (h *HTMLReport) page(files []string, c *session.Counts) *page {
	p := &page{Title: h.opts.Title, Files: files, Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	if p.Title == "" {
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		p.Title = strings.Join(names, ", ")
	}
	if c.First.IsZero() {
		p.Range = "no traffic"
	} else {
		p.Range = fmt.Sprintf("%s – %s (%s)", clock(c.First), clock(c.Last), roundDur(c.Duration()))
	}
	nSessions := len(h.sessions) + h.dropped
	gm := [2]int{}
	gb := [2]int{}
	for d := range 2 {
		gm[d], gb[d] = c.GameMessages(d)
	}
	p.Cards = []card{
		{"Sessions", strconv.Itoa(nSessions)},
		{"Duration", humanDur(c.Duration())},
		{"Datagrams", thousands(c.Datagrams[0] + c.Datagrams[1])},
		{"Game messages", thousands(gm[0] + gm[1])},
		{"Game bytes", humanBytes(float64(gb[0] + gb[1]))},
		{"Damaged", thousands(c.Damaged[0] + c.Damaged[1] + c.Lost + c.Unplaced)},
	}
	if n := c.NonStockTotal(); n > 0 {
		p.Cards = append(p.Cards, card{"Non-stock", thousands(n)})
	}
	if h.dropped > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d sessions are left out of the session pages, the charts and the tables (only the first %d are kept); the Gantt chart's overview and the totals count them.",
			h.dropped, h.opts.MaxSessions))
	}

	start, end := c.First, c.Last
	for _, hs := range h.sessions {
		if start.IsZero() || hs.s.Start.Before(start) {
			start = hs.s.Start
		}
		if e := sessionEnd(hs.s); e.After(end) {
			end = e
		}
	}
	ax := newTimeAxis(start, end)
	p.Gantt = h.gantt(ax)
	p.Rates = h.ratesSVG(ax)
	p.Bandwidth = h.bandwidthSVG()
	p.RTT = h.rttSVG()

	for _, hs := range h.sessions {
		s := hs.s
		row := sessionRow{Player: sessionLabel(s), Client: s.Client.String(), File: filepath.Base(hs.file),
			Slot: intOrDash(s.Slot), Team: intOrDash(s.Team), Ship: orDash(s.Ship), Reached: phaseLabel[s.Reached],
			ReachedColor: phaseColor[s.Reached], Start: s.Start.UTC().Format("15:04:05.000"),
			Duration: humanDur(s.Duration()), End: endText(s)}
		if s.Score != (session.Score{}) {
			row.Score = fmt.Sprintf("%d / %d / %d", s.Score.Kills, s.Score.Deaths, s.Score.Score)
		} else {
			row.Score = "–"
		}
		p.Sessions = append(p.Sessions, row)
	}
	p.Opcodes = opcodeRows(c)
	p.Transport = transportRows(c)
	p.GameSpy = c.GameSpyRows()
	p.NonStock = c.NonStockRows()

	sort.SliceStable(h.chat, func(i, j int) bool { return h.chat[i].t.Before(h.chat[j].t) })
	p.Chat = dedupChat(h.chat)
	p.ChatLost = h.chatLost
	return p
}

// dedupChat drops the copies of one line seen in several sessions (the
// host's lines reach every client).
func dedupChat(rows []chatRow) []chatRow {
	var out []chatRow
	for _, r := range rows {
		dup := false
		for i := len(out) - 1; i >= 0 && r.t.Sub(out[i].t) < 2*time.Second; i-- {
			o := out[i].line
			if o.SenderID == r.line.SenderID && o.Text == r.line.Text && o.Team == r.line.Team {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, r)
		}
	}
	return out
}

func opcodeRows(c *session.Counts) []opcodeRow {
	total, totalBytes := 0, 0
	for d := range 2 {
		n, b := c.GameMessages(d)
		total += n
		totalBytes += b
	}
	var rows []opcodeRow
	for op := range 256 {
		a, b := c.Opcodes[0][op], c.Opcodes[1][op]
		if a.Count+b.Count == 0 {
			continue
		}
		o := game.Opcode(op)
		g := OpcodeGroup(o)
		r := opcodeRow{Hex: hexByte(uint8(op)), Name: o.String(), Group: g.String(), Color: g.Color(),
			Count: [2]string{countOrDash(a.Count), countOrDash(b.Count)},
			Bytes: [2]string{countOrDash(a.Bytes), countOrDash(b.Bytes)}}
		share := ratio(a.Count+b.Count, total)
		r.Share = fmt.Sprintf("%.1f%%", 100*share)
		r.ShareText = fmt.Sprintf("%.1f%% of messages, %.1f%% of bytes", 100*share, 100*ratio(a.Bytes+b.Bytes, totalBytes))
		rows = append(rows, r)
	}
	return rows
}

func transportRows(c *session.Counts) []transportRow {
	var rows []transportRow
	for t := range 256 {
		a, b := c.Transport[0][t], c.Transport[1][t]
		if a.Count+b.Count == 0 {
			continue
		}
		tt := dissect.TransportType(t)
		rows = append(rows, transportRow{Hex: hexByte(uint8(t)), Name: tt.String(),
			Count: [2]string{countOrDash(a.Count), countOrDash(b.Count)},
			Bytes: [2]string{countOrDash(a.Bytes), countOrDash(b.Bytes)}})
	}
	return rows
}

// sessionLabel names a session in a chart row: the player's name, else the
// client address.
func sessionLabel(s *session.Session) string {
	if s.Name != "" {
		return s.Name
	}
	if s.Slot >= 0 {
		return fmt.Sprintf("slot %d (%s)", s.Slot, s.Client)
	}
	return s.Client.String()
}
