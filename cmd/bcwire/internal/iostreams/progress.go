package iostreams

import (
	"fmt"
	"io"
	"time"
)

// Progress shows how far a long input has been read, on stderr, only when
// stderr is a terminal. A nil *Progress does nothing, so callers need not
// check.
type Progress struct {
	w     io.Writer
	name  string
	total int64
	last  time.Time
	shown bool
}

// NewProgress returns a progress indicator for reading total bytes of name,
// or nil when s.Err is not a terminal.
func NewProgress(s *IOStreams, name string, total int64) *Progress {
	if s == nil || !s.ErrTTY || total <= 0 {
		return nil
	}
	return &Progress{w: s.Err, name: name, total: total}
}

// Update shows done bytes of the total, at most four times a second.
func (p *Progress) Update(done int64) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 250*time.Millisecond {
		return
	}
	p.last = now
	p.shown = true
	fmt.Fprintf(p.w, "\r\x1b[K%s: %3.0f%% (%d of %d MiB)", p.name, 100*float64(done)/float64(p.total), done>>20, p.total>>20)
}

// Clear removes the indicator's line, before other output to stderr and at
// the end.
func (p *Progress) Clear() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
	p.shown = false
	p.last = time.Time{}
}
