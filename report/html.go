package report

// The HTML report: one self-contained page (inline CSS, inline SVG drawn
// here, no script, nothing fetched) with a capture's sessions as a Gantt
// chart, message rates by opcode group, bandwidth per session, ACK
// round-trip times, the opcode tables and the chat log. Text from the
// capture (player names, chat) is escaped by html/template, in the page and
// in the charts alike.

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

//go:embed assets/report.html.tmpl
var htmlPage string

var pageTmpl = template.Must(template.New("report").Parse(htmlPage))

// Group is a family of messages that the rate chart and the opcode table
// color alike.
type Group uint8

const (
	GroupStateUpdate Group = iota // StateUpdate 0x1C
	GroupCombat                   // objects, weapons, Python events, explosions, scores
	GroupJoin                     // settings, checksums, file transfer, new player, mission init
	GroupScript                   // chat, host and team messages, other script messages
	GroupControl                  // transport messages other than data: ACKs, keepalives, connects
	GroupOther                    // opcodes nobody knows
	numGroups
)

var groupInfo = [numGroups]struct{ name, color string }{
	{"StateUpdate", "#4e79a7"},
	{"Events & combat", "#e15759"},
	{"Checksum & join", "#f28e2b"},
	{"Script & chat", "#59a14f"},
	{"Control & ACK", "#9d9da0"},
	{"Other", "#b07aa1"},
}

func (g Group) String() string { return groupInfo[g].name }

// Color is the group's color in every chart and table.
func (g Group) Color() string { return groupInfo[g].color }

// OpcodeGroup says which group a game opcode belongs to.
func OpcodeGroup(op game.Opcode) Group {
	switch op {
	case game.OpStateUpdate:
		return GroupStateUpdate
	case game.OpSettings, game.OpGameInit, game.OpDeletePlayerUI, game.OpDeletePlayerAnim,
		game.OpChecksumRequest, game.OpChecksumResponse, game.OpVersionMismatch, game.OpSystemChecksumFail,
		game.OpFileTransfer, game.OpFileTransferACK, game.OpChecksumComplete, game.OpNewPlayerInGame,
		game.OpMissionInit:
		return GroupJoin
	case game.OpHostMsg, game.OpChat, game.OpTeamChat, game.OpTeamMessage:
		return GroupScript
	case game.OpScoreChange, game.OpScore, game.OpEndGame, game.OpRestartGame, game.OpScoreInit, game.OpTeamScore:
		return GroupCombat
	case game.OpUnused24, game.OpUnused26:
		return GroupOther
	}
	switch {
	case op.IsScript():
		return GroupScript
	case op < game.MaxMessageTypes:
		return GroupCombat
	}
	return GroupOther
}

// Phase and direction colors.
var (
	phaseColor = map[session.Phase]string{
		session.PhaseUnknown: "#c9c9cc", session.PhaseConnecting: "#76b7b2", session.PhaseChecksum: "#f28e2b",
		session.PhaseLobby: "#edc948", session.PhaseInGame: "#59a14f",
	}
	phaseLabel = map[session.Phase]string{
		session.PhaseUnknown: "before the capture", session.PhaseConnecting: "connecting",
		session.PhaseChecksum: "checksum", session.PhaseLobby: "lobby", session.PhaseInGame: "in game",
	}
	dirColor = [2]string{"#3b6ea5", "#d37295"} // C->S, S->C
)

// rateBuckets is how many time buckets the rate chart has. Their width
// starts at baseBucket and doubles whenever the capture outgrows them, so
// memory stays fixed however long the capture is.
const (
	rateBuckets = 240
	baseBucket  = 250 * time.Millisecond
)

// rates counts messages per time bucket and group.
type rates struct {
	origin  time.Time
	width   time.Duration
	used    int // buckets[:used] may hold counts
	buckets [rateBuckets][numGroups]int
}

func (r *rates) add(t time.Time, g Group) {
	if t.IsZero() {
		return
	}
	r.buckets[r.index(t)][g]++
}

func (r *rates) index(t time.Time) int {
	if r.width == 0 {
		r.origin, r.width = t.Truncate(time.Second), baseBucket
	}
	for {
		if t.Before(r.origin) {
			// An earlier time (a second file): move the counts right.
			k := int((r.origin.Sub(t) + r.width - 1) / r.width)
			if r.used+k > rateBuckets {
				r.widen()
				continue
			}
			copy(r.buckets[k:], r.buckets[:r.used])
			clear(r.buckets[:k])
			r.origin = r.origin.Add(-time.Duration(k) * r.width)
			r.used += k
			continue
		}
		i := int(t.Sub(r.origin) / r.width)
		if i < rateBuckets {
			r.used = max(r.used, i+1)
			return i
		}
		r.widen()
	}
}

// widen doubles the bucket width, merging neighbours.
func (r *rates) widen() {
	for i := range rateBuckets / 2 {
		for g := range numGroups {
			r.buckets[i][g] = r.buckets[2*i][g] + r.buckets[2*i+1][g]
		}
	}
	clear(r.buckets[rateBuckets/2:])
	r.width *= 2
	r.used = (r.used + 1) / 2
}

// HTMLOptions tune an HTMLReport. Zero fields take the defaults.
type HTMLOptions struct {
	Title string // default: the capture file names
	// MaxSessions caps the sessions kept for the charts (default 200); the
	// rest are counted in the totals and noted on the page.
	MaxSessions int
	// MaxChat caps the chat log (default 1000 lines).
	MaxChat int
}

// HTMLReport collects a capture for `bcwire report`. Feed it every flow
// record with Record and every session with Session, then call Write.
// It keeps the sessions (up to MaxSessions) and a fixed-size table of
// message rates.
type HTMLReport struct {
	opts     HTMLOptions
	sessions []htmlSession
	dropped  int // sessions beyond MaxSessions
	chat     []chatRow
	chatLost int
	rates    rates
}

type htmlSession struct {
	file string
	s    *session.Session
}

// NewHTMLReport returns an empty report.
func NewHTMLReport(o HTMLOptions) *HTMLReport {
	if o.MaxSessions <= 0 {
		o.MaxSessions = 200
	}
	if o.MaxChat <= 0 {
		o.MaxChat = 1000
	}
	return &HTMLReport{opts: o}
}

// Record counts one flow record in the message rates.
func (h *HTMLReport) Record(r *flow.Record) {
	if r.Kind != flow.KindMessage || r.Msg == nil {
		return
	}
	switch {
	case r.Msg.Type != dissect.TypeData:
		h.rates.add(r.Time, GroupControl)
	case r.Game != nil:
		h.rates.add(r.Time, OpcodeGroup(r.Game.Msg.Opcode()))
	}
}

// Session keeps one finished session; its signature fits the emit function
// of the commands' capture scan.
func (h *HTMLReport) Session(file string, s *session.Session) error {
	for _, c := range s.Chat {
		if len(h.chat) >= h.opts.MaxChat {
			h.chatLost++
			continue
		}
		h.chat = append(h.chat, chatRow{t: c.Time, line: c, Player: sessionLabel(s)})
	}
	h.chatLost += s.ChatDropped
	if len(h.sessions) >= h.opts.MaxSessions {
		h.dropped++
		return nil
	}
	h.sessions = append(h.sessions, htmlSession{file: file, s: s})
	return nil
}

// Write renders the page for files, whose traffic totals is.
func (h *HTMLReport) Write(w io.Writer, files []string, totals *session.Counts) error {
	sort.SliceStable(h.sessions, func(i, j int) bool { return h.sessions[i].s.Start.Before(h.sessions[j].s.Start) })
	p := h.page(files, totals)
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageTmpl.Execute(bw, p); err != nil {
		return err
	}
	return bw.Flush()
}

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
	if h.dropped > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d sessions are left out of the charts and tables (only the first %d are kept); the totals count them.",
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
	p.Gantt = h.ganttSVG(ax)
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

// ---- time axis ----

// timeAxis maps capture time to x within the plot area.
type timeAxis struct {
	start, end time.Time
	x0, x1     float64
	step       time.Duration
}

var tickSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

const (
	chartW   = 1100.0
	plotLeft = 190.0
	plotRgt  = 1080.0
)

func newTimeAxis(start, end time.Time) timeAxis {
	if start.IsZero() {
		start = time.Unix(0, 0)
	}
	if !end.After(start) {
		end = start.Add(time.Second)
	}
	a := timeAxis{start: start, end: end, x0: plotLeft, x1: plotRgt}
	span := end.Sub(start)
	a.step = tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= 10 {
			a.step = s
			break
		}
	}
	return a
}

func (a timeAxis) x(t time.Time) float64 {
	f := float64(t.Sub(a.start)) / float64(a.end.Sub(a.start))
	return a.x0 + math.Max(0, math.Min(1, f))*(a.x1-a.x0)
}

// ticks are the times of the axis labels, on whole steps of the clock.
func (a timeAxis) ticks() []time.Time {
	var ts []time.Time
	t := a.start.Truncate(a.step)
	if t.Before(a.start) {
		t = t.Add(a.step)
	}
	for ; !t.After(a.end); t = t.Add(a.step) {
		ts = append(ts, t)
	}
	return ts
}

func (a timeAxis) label(t time.Time) string {
	if a.step >= time.Minute {
		return t.UTC().Format("15:04")
	}
	return t.UTC().Format("15:04:05")
}

// draw writes vertical grid lines from top to bottom and the labels below.
func (a timeAxis) draw(b *svg, top, bottom float64) {
	for _, t := range a.ticks() {
		x := a.x(t)
		b.line(x, top, x, bottom, "grid")
		b.text(x, bottom+16, "tick mid", a.label(t))
	}
	b.line(a.x0, bottom, a.x1, bottom, "axis")
	b.text((a.x0+a.x1)/2, bottom+36, "axis-title mid", "capture time (UTC)")
}

// ---- SVG building ----

// svg accumulates one chart's markup. Every piece of text goes through
// template.HTMLEscapeString.
type svg struct {
	sb strings.Builder
}

func newSVG(w, h float64, label string) *svg {
	b := &svg{}
	fmt.Fprintf(&b.sb, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`,
		num(w), num(h), esc(label))
	return b
}

func (b *svg) html() template.HTML {
	b.sb.WriteString("</svg>")
	return template.HTML(b.sb.String()) // every text in it was escaped on the way in
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

func (b *svg) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&b.sb, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" rx="2">`, num(x), num(y), num(w), num(h), fill)
	b.title(title)
	b.sb.WriteString("</rect>")
}

func (b *svg) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(&b.sb, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="%s"/>`, num(x1), num(y1), num(x2), num(y2), class)
}

func (b *svg) coloredLine(x1, y1, x2, y2 float64, color string, width float64) {
	fmt.Fprintf(&b.sb, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/>`,
		num(x1), num(y1), num(x2), num(y2), color, num(width))
}

func (b *svg) text(x, y float64, class, s string) {
	fmt.Fprintf(&b.sb, `<text x="%s" y="%s" class="%s">%s</text>`, num(x), num(y), class, esc(s))
}

func (b *svg) title(s string) {
	if s != "" {
		fmt.Fprintf(&b.sb, "<title>%s</title>", esc(s))
	}
}

func (b *svg) path(d, fill, stroke, title string) {
	fmt.Fprintf(&b.sb, `<path d="%s" fill="%s" stroke="%s">`, d, fill, stroke)
	b.title(title)
	b.sb.WriteString("</path>")
}

// legend draws colored swatches with names in a row from x, y.
func (b *svg) legend(x, y float64, items [][2]string) {
	for _, it := range items {
		b.rect(x, y-10, 12, 12, it[1], "")
		b.text(x+17, y, "legend", it[0])
		x += 17 + textWidth(it[0]) + 22
	}
}

// textWidth guesses the width of s at the legend's 12px font.
func textWidth(s string) float64 { return 6.5 * float64(utf8.RuneCountInString(s)) }

// clip shortens a label for a chart's left column.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func emptyChart(label, msg string) template.HTML {
	b := newSVG(chartW, 60, label)
	b.text(chartW/2, 35, "empty mid", msg)
	return b.html()
}

// ---- chart 1: session timelines ----

// markerKinds are the events drawn on the Gantt chart, with their shape and
// color.
var markerKinds = []struct {
	kind, label, shape, color string
}{
	{session.EventKill, "kill", "diamond", "#c0392b"},
	{session.EventShipDestroyed, "ship lost", "cross", "#222"},
	{session.EventShipCreated, "ship created", "up", "#4e79a7"},
	{"chat", "chat", "circle", "#8e44ad"},
	{session.EventRetransmitBurst, "retransmit burst", "down", "#e67e22"},
	{session.EventChecksumFail, "checksum fail, damage", "square", "#ff0000"},
	{session.EventDamaged, "", "square", "#ff0000"},
	{session.EventBoot, "boot", "square", "#7f0000"},
	{session.EventEndGame, "end/restart game", "bar", "#555"},
	{session.EventRestartGame, "", "bar", "#555"},
}

func markerOf(kind string) (shape, color string, ok bool) {
	for _, m := range markerKinds {
		if m.kind == kind {
			return m.shape, m.color, true
		}
	}
	return "", "", false
}

func (b *svg) marker(x, y float64, shape, color, title string) {
	var d string
	switch shape {
	case "diamond":
		d = fmt.Sprintf("M%s %sl5 5l-5 5l-5 -5z", num(x), num(y-5))
	case "cross":
		d = fmt.Sprintf("M%s %sl8 8m0 -8l-8 8", num(x-4), num(y-4))
		fmt.Fprintf(&b.sb, `<path d="%s" fill="none" stroke="%s" stroke-width="2.2">`, d, color)
		b.title(title)
		b.sb.WriteString("</path>")
		return
	case "up":
		d = fmt.Sprintf("M%s %sl5 9h-10z", num(x), num(y-5))
	case "down":
		d = fmt.Sprintf("M%s %sl-5 -9h10z", num(x), num(y+4))
	case "square":
		d = fmt.Sprintf("M%s %sh8v8h-8z", num(x-4), num(y-4))
	case "bar":
		d = fmt.Sprintf("M%s %sh3v12h-3z", num(x-1.5), num(y-6))
	default: // circle
		fmt.Fprintf(&b.sb, `<circle cx="%s" cy="%s" r="4.5" fill="%s" stroke="#fff" stroke-width="1">`, num(x), num(y), color)
		b.title(title)
		b.sb.WriteString("</circle>")
		return
	}
	b.path(d, color, "#fff", title)
}

// phaseSpans splits a session into the phases it went through.
func phaseSpans(s *session.Session) []struct {
	from, to time.Time
	phase    session.Phase
} {
	type mark struct {
		t *time.Time
		p session.Phase
	}
	first := session.PhaseConnecting
	if s.MidCapture {
		first = session.PhaseUnknown
	}
	var checksum *time.Time
	if len(s.Checksums) > 0 && s.Checksums[0].Request != nil {
		checksum = s.Checksums[0].Request
	}
	lobby := s.Phases.Lobby
	if s.Phases.ChecksumDone != nil {
		lobby = s.Phases.ChecksumDone
	}
	marks := []mark{{&s.Start, first}, {checksum, session.PhaseChecksum}, {lobby, session.PhaseLobby},
		{s.Phases.InGame, session.PhaseInGame}}
	end := sessionEnd(s)
	var out []struct {
		from, to time.Time
		phase    session.Phase
	}
	for i, m := range marks {
		if m.t == nil {
			continue
		}
		to := end
		for _, n := range marks[i+1:] {
			if n.t != nil {
				to = *n.t
				break
			}
		}
		if to.Before(*m.t) {
			continue
		}
		out = append(out, struct {
			from, to time.Time
			phase    session.Phase
		}{*m.t, to, m.p})
	}
	return out
}

func (h *HTMLReport) ganttSVG(ax timeAxis) template.HTML {
	const label = "Session timelines"
	if len(h.sessions) == 0 {
		return emptyChart(label, "no sessions in the capture")
	}
	const top, rowH = 48.0, 34.0
	bottom := top + rowH*float64(len(h.sessions))
	b := newSVG(chartW, bottom+52, label)
	var items [][2]string
	for _, p := range []session.Phase{session.PhaseUnknown, session.PhaseConnecting, session.PhaseChecksum, session.PhaseLobby, session.PhaseInGame} {
		items = append(items, [2]string{phaseLabel[p], phaseColor[p]})
	}
	b.legend(plotLeft, 16, items)
	x := plotLeft
	for _, m := range markerKinds {
		if m.label == "" {
			continue
		}
		b.marker(x+5, 36, m.shape, m.color, "")
		b.text(x+15, 40, "legend", m.label)
		x += 15 + textWidth(m.label) + 18
	}
	for i := range h.sessions {
		if i%2 == 1 {
			b.rect(8, top+float64(i)*rowH, chartW-16, rowH, "#f4f5f7", "")
		}
	}
	ax.draw(b, top, bottom)
	for i, hs := range h.sessions {
		s := hs.s
		y := top + float64(i)*rowH
		name := sessionLabel(s)
		b.text(plotLeft-10, y+rowH/2+4, "row-label end", clip(name, 24))
		barY := y + 15
		for _, sp := range phaseSpans(s) {
			x0, x1 := ax.x(sp.from), ax.x(sp.to)
			title := fmt.Sprintf("%s: %s %s – %s (%s)", name, phaseLabel[sp.phase], sp.from.UTC().Format("15:04:05.000"),
				sp.to.UTC().Format("15:04:05.000"), humanDur(sp.to.Sub(sp.from)))
			b.rect(x0, barY, math.Max(x1-x0, 2), 14, phaseColor[sp.phase], title)
		}
		endX := ax.x(sessionEnd(s))
		if s.EndReason != session.EndOpen {
			b.coloredLine(endX, barY-2, endX, barY+16, "#333", 1.5)
		}
		for _, e := range s.Events {
			if shape, color, ok := markerOf(e.Kind); ok {
				b.marker(ax.x(e.Time), y+8, shape, color, fmt.Sprintf("%s  %s  (frame %d)", e.Time.UTC().Format("15:04:05.000"), e.Text, e.Frame))
			}
		}
		for _, c := range s.Chat {
			who := chatRow{line: c}.Sender()
			b.marker(ax.x(c.Time), y+8, "circle", "#8e44ad", fmt.Sprintf("%s  %s: %s", c.Time.UTC().Format("15:04:05.000"), who, c.Text))
		}
	}
	return b.html()
}

// ---- chart 2: message rate by group ----

func (h *HTMLReport) ratesSVG(ax timeAxis) template.HTML {
	const label = "Message rate by opcode group"
	r := &h.rates
	if r.used == 0 {
		return emptyChart(label, "no Bridge Commander messages in the capture")
	}
	const top, plotH = 40.0, 260.0
	bottom := top + plotH
	b := newSVG(chartW, bottom+52, label)
	var items [][2]string
	for g := range numGroups {
		items = append(items, [2]string{g.String(), g.Color()})
	}
	b.legend(plotLeft, 16, items)

	// Show at most about 150 steps, none narrower than a second: finer
	// buckets make a noisy chart of a short capture.
	width, counts := r.width, r.buckets[:r.used]
	var merged [][numGroups]int
	for width < time.Second || len(counts) > 150 {
		merged = make([][numGroups]int, (len(counts)+1)/2)
		for i, c := range counts {
			for g := range numGroups {
				merged[i/2][g] += c[g]
			}
		}
		counts, width = merged, width*2
	}
	secs := width.Seconds()
	peak := 0.0
	for _, c := range counts {
		sum := 0
		for g := range numGroups {
			sum += c[g]
		}
		peak = math.Max(peak, float64(sum)/secs)
	}
	yMax, yStep := niceScale(peak, 5)
	y := func(v float64) float64 { return bottom - v/yMax*plotH }
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		b.line(plotLeft, y(v), plotRgt, y(v), "grid")
		b.text(plotLeft-8, y(v)+4, "tick end", trimFloat(v))
	}
	b.sb.WriteString(`<text class="axis-title mid" transform="translate(140 ` + num(top+plotH/2) + `) rotate(-90)">messages / s</text>`)
	ax.draw(b, top, bottom)

	// Stacked areas, StateUpdate at the bottom; each bucket is a flat step.
	n := len(counts)
	base := make([]float64, n)
	for g := range numGroups {
		tops := make([]float64, n)
		any := false
		for i, c := range counts {
			tops[i] = base[i] + float64(c[g])/secs
			if c[g] > 0 {
				any = true
			}
		}
		if !any {
			continue
		}
		var d strings.Builder
		xAt := func(i int) float64 { return ax.x(r.origin.Add(time.Duration(i) * width)) }
		fmt.Fprintf(&d, "M%s %s", num(xAt(0)), num(y(base[0])))
		for i := range n {
			fmt.Fprintf(&d, "L%s %sL%s %s", num(xAt(i)), num(y(tops[i])), num(xAt(i+1)), num(y(tops[i])))
		}
		for i := n - 1; i >= 0; i-- {
			fmt.Fprintf(&d, "L%s %sL%s %s", num(xAt(i+1)), num(y(base[i])), num(xAt(i)), num(y(base[i])))
		}
		d.WriteString("Z")
		b.path(d.String(), g.Color(), g.Color(), g.String())
		base = tops
	}
	b.text(plotRgt, top-8, "note end", fmt.Sprintf("one step = %s", humanDur(width)))
	return b.html()
}

// niceScale picks an axis maximum at or above v and a step, about n steps.
func niceScale(v float64, n int) (top, step float64) {
	if v <= 0 {
		return 1, 0.25
	}
	raw := v / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

func trimFloat(v float64) string {
	if v >= 1000 {
		return thousands(int(math.Round(v)))
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// ---- chart 3: bandwidth per session and direction ----

// sessionBytes is the transport bytes a session moved in direction d.
func sessionBytes(s *session.Session, d int) int {
	n := 0
	for _, t := range s.Traffic.Transport[d] {
		n += t.Bytes
	}
	return n
}

func (h *HTMLReport) bandwidthSVG() template.HTML {
	const label = "Bandwidth per session and direction"
	if len(h.sessions) == 0 {
		return emptyChart(label, "no sessions in the capture")
	}
	const top, rowH, barH = 44.0, 40.0, 13.0
	bottom := top + rowH*float64(len(h.sessions))
	b := newSVG(chartW, bottom+52, label)
	b.legend(plotLeft, 16, [][2]string{{"client → server", dirColor[0]}, {"server → client", dirColor[1]}})
	rate := func(s *session.Session, d int) float64 {
		sec := s.Duration().Seconds()
		if sec < 1 {
			sec = 1
		}
		return float64(sessionBytes(s, d)) / sec
	}
	peak := 0.0
	for _, hs := range h.sessions {
		peak = math.Max(peak, math.Max(rate(hs.s, 0), rate(hs.s, 1)))
	}
	xMax, xStep := niceScale(peak, 6)
	const barRight = plotRgt - 110 // room for the value labels
	x := func(v float64) float64 { return plotLeft + v/xMax*(barRight-plotLeft) }
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		b.line(x(v), top, x(v), bottom, "grid")
		b.text(x(v), bottom+16, "tick mid", humanBytes(v)+"/s")
	}
	b.line(plotLeft, bottom, barRight, bottom, "axis")
	b.text((plotLeft+barRight)/2, bottom+36, "axis-title mid", "mean transport bytes per second over the session (UDP/IP headers not counted)")
	for i, hs := range h.sessions {
		s := hs.s
		y := top + float64(i)*rowH
		name := sessionLabel(s)
		b.text(plotLeft-10, y+rowH/2+4, "row-label end", clip(name, 24))
		for d := range 2 {
			v := rate(s, d)
			by := y + 6 + float64(d)*(barH+1)
			title := fmt.Sprintf("%s %s: %s in %s (%s/s)", name, session.Dirs[d], humanBytes(float64(sessionBytes(s, d))),
				humanDur(s.Duration()), humanBytes(v))
			b.rect(plotLeft, by, math.Max(x(v)-plotLeft, 1), barH, dirColor[d], title)
			b.text(x(v)+6, by+barH-2, "value", fmt.Sprintf("%s/s · %s", humanBytes(v), humanBytes(float64(sessionBytes(s, d)))))
		}
	}
	return b.html()
}

// ---- chart 4: ACK round-trip times ----

type rttRow struct {
	name string
	d    int
	ch   string
	rtt  session.RTT
	sep  bool // first row of its session
}

func (h *HTMLReport) rttSVG() template.HTML {
	const label = "ACK round-trip time per session and channel"
	var rows []rttRow
	for _, hs := range h.sessions {
		s := hs.s
		first := true
		add := func(d int, ch string, c session.ChannelStats) {
			if c.RTT.Samples == 0 {
				return
			}
			rows = append(rows, rttRow{name: sessionLabel(s), d: d, ch: ch, rtt: c.RTT, sep: first})
			first = false
		}
		add(0, "data", s.Reliability.ClientToServer.Data)
		add(0, "control", s.Reliability.ClientToServer.Control)
		add(1, "data", s.Reliability.ServerToClient.Data)
		add(1, "control", s.Reliability.ServerToClient.Control)
	}
	if len(rows) == 0 {
		return emptyChart(label, "no ACKed reliable messages in the capture")
	}
	const top, rowH = 48.0, 18.0
	bottom := top + rowH*float64(len(rows))
	b := newSVG(chartW, bottom+52, label)
	b.legend(plotLeft, 16, [][2]string{{"sent by the client (ACK from the server)", dirColor[0]}, {"sent by the server (ACK from the client)", dirColor[1]}})
	b.text(plotLeft, 36, "note", "line: min – max · box: median – 95th percentile · tick: median")
	peak := time.Duration(0)
	for _, r := range rows {
		peak = max(peak, r.rtt.Max)
	}
	xMax, xStep := niceScale(float64(peak)/float64(time.Millisecond), 6)
	const right = plotRgt - 70
	x := func(d time.Duration) float64 {
		return plotLeft + float64(d)/float64(time.Millisecond)/xMax*(right-plotLeft)
	}
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		xv := plotLeft + v/xMax*(right-plotLeft)
		b.line(xv, top, xv, bottom, "grid")
		b.text(xv, bottom+16, "tick mid", trimFloat(v)+" ms")
	}
	b.line(plotLeft, bottom, right, bottom, "axis")
	b.text((plotLeft+right)/2, bottom+36, "axis-title mid", "time from a reliable message to its ACK, at the capture point")
	for i, r := range rows {
		y := top + float64(i)*rowH
		if r.sep && i > 0 {
			b.line(8, y, chartW-8, y, "sep")
		}
		if r.sep {
			b.text(8, y+rowH/2+4, "row-label", clip(r.name, 16))
		}
		b.text(plotLeft-10, y+rowH/2+4, "row-sub end", session.Dirs[r.d].String()+" "+r.ch)
		c := dirColor[r.d]
		mid := y + rowH/2
		t := r.rtt
		title := fmt.Sprintf("%s %s %s: min %s, median %s, p95 %s, max %s (%d samples)", r.name, session.Dirs[r.d], r.ch,
			msText(t.Min), msText(t.Median), msText(t.P95), msText(t.Max), t.Samples)
		b.coloredLine(x(t.Min), mid, x(t.Max), mid, c, 1.5)
		b.coloredLine(x(t.Min), mid-4, x(t.Min), mid+4, c, 1.5)
		b.coloredLine(x(t.Max), mid-4, x(t.Max), mid+4, c, 1.5)
		b.rect(x(t.Median), mid-5, math.Max(x(t.P95)-x(t.Median), 2), 10, c, title)
		b.coloredLine(x(t.Median), mid-7, x(t.Median), mid+7, "#111", 2)
		b.text(x(t.Max)+8, mid+4, "value", fmt.Sprintf("median %s · n=%d", msText(t.Median), t.Samples))
	}
	return b.html()
}

// ---- formatting ----

func humanDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func humanBytes(v float64) string {
	switch {
	case v >= 1e9:
		return trimFloat(math.Round(v/1e8)/10) + " GB"
	case v >= 1e6:
		return trimFloat(math.Round(v/1e5)/10) + " MB"
	case v >= 1e3:
		return trimFloat(math.Round(v/1e2)/10) + " kB"
	}
	return fmt.Sprintf("%.0f B", v)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func countOrDash(n int) string {
	if n == 0 {
		return "–"
	}
	return thousands(n)
}

func intOrDash(n int) string {
	if n < 0 {
		return "–"
	}
	return strconv.Itoa(n)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func hexByte(b uint8) string { return fmt.Sprintf("0x%02X", b) }
