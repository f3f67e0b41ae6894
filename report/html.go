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
	"html/template"
	"io"
	"sort"
	"sync"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
)

//go:embed assets/report.html.tmpl
var htmlPage string

// pageTmpl is parsed at the first report, not at start-up: parsing it
// costs every other command about half a millisecond and 3,000
// allocations (issue 30: commands pay only for what they use).
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(htmlPage))
})

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
	// overview keeps every session's spans (up to maxOverview) for the
	// Gantt chart's overview, beyond the sessions kept whole.
	overview     []overviewSpan
	overviewLost int
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
	h.keepOverview(s)
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
	if err := pageTmpl().Execute(bw, p); err != nil {
		return err
	}
	return bw.Flush()
}
