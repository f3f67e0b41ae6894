package livecmd

// The summary live prints on stderr when the capture ends.

import (
	"bufio"
	"fmt"
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
)

// final prints the session summaries, the statistics table and the kernel's
// counts on stderr.
func (l *liveRun) final(sum flow.Summary, frames int) {
	if l.o.Quiet {
		if l.src.Lost() > 0 || (l.rw != nil && l.src.Frames() > l.rw.Written()) {
			l.kernelLine(l.err) // a loss is worth a line even when quiet
			l.err.Flush()
		}
		return
	}
	w := l.err
	fmt.Fprintf(w, "\nbcwire live: %s on %s: %d packets captured, %d Bridge Commander datagrams, %d GameSpy, %d other UDP, %d sessions",
		time.Since(l.start).Round(time.Millisecond), l.o.Iface, frames, sum.Flow.Datagrams, sum.Flow.GameSpy, sum.Flow.OtherUDP, l.sessions)
	if sum.Damage > 0 {
		fmt.Fprintf(w, ", %d DAMAGED", sum.Damage)
	}
	fmt.Fprintln(w)
	l.kernelLine(w)
	for _, line := range l.summaries {
		fmt.Fprintln(w, line)
	}
	if l.sessions > len(l.summaries) {
		fmt.Fprintf(w, "  ... and %d more sessions\n", l.sessions-len(l.summaries))
	}
	w.Flush()
	if err := l.sp.Totals([]string{l.o.Iface}, l.b.Totals(), l.sessions); err != nil && l.printErr == nil {
		l.printErr = err
	}
	l.sp.Flush()
}

// kernelLine accounts for every frame the kernel passed before the capture
// was cut: captured (written and decoded), past -c, or lost.
func (l *liveRun) kernelLine(w *bufio.Writer) {
	src := l.src
	st := src.Kernel()
	fmt.Fprintf(w, "bcwire live: kernel: %d packets passed the filter, %d dropped; ", st.Packets, st.Drops)
	lost := src.Lost()
	if lost == 0 && src.Beyond() == 0 {
		fmt.Fprintf(w, "all %d captured", src.Frames())
	} else {
		fmt.Fprintf(w, "%d captured", src.Frames())
	}
	if n := src.Beyond(); n > 0 {
		fmt.Fprintf(w, ", %d more after -c %d not kept", n, l.o.Count)
	}
	if lost > 0 {
		fmt.Fprintf(w, ", %d LOST", lost)
		if st.Drops > 0 {
			fmt.Fprint(w, " (the kernel's buffer was full: the decoder fell behind; use a narrower -f, or --stats-only)")
		} else {
			fmt.Fprint(w, " (the kernel had passed them, but they did not come out of its ring after the stop)")
		}
	}
	fmt.Fprintln(w)
	if l.rw != nil {
		if n := src.Frames() - l.rw.Written(); n > 0 {
			fmt.Fprintf(w, "bcwire live: %d captured packets NOT WRITTEN to %s (writing failed)", n, l.o.Write)
			if p := l.rw.Partial(); p != "" {
				fmt.Fprintf(w, "; the file being written is kept as %s", p)
			}
			fmt.Fprintln(w)
		}
	}
	if n := src.Undecoded(); n > 0 {
		fmt.Fprintf(w, "bcwire live: %d captured packets not decoded (output failed)\n", n)
	}
}

// sessionLine is one session's line in the final summary.
func sessionLine(s *session.Session) string {
	c, sv := s.Reliability.ClientToServer.Total(), s.Reliability.ServerToClient.Total()
	name := s.Name
	if name == "" {
		name = "?"
	}
	return fmt.Sprintf("  session %s on %s: player %q slot %d, %s, reached %s, ended %s; retransmissions C->S %d, S->C %d; %d damaged",
		s.Client, s.Server, name, s.Slot, s.Duration().Round(time.Millisecond), s.Reached, s.EndReason,
		c.Retransmissions, sv.Retransmissions, s.Damaged)
}
