package verifycmd

// The adaptive verdict: the live exchange read by the diff engine, as
// `bcwire diff` reads a capture, and compared with the replayed capture.

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/server/replay"
	"github.com/bcwire/bcwire/session/diff"
)

// parseFailOn reads --fail-on: a severity (adaptive mode; minor when none
// is given) and, optionally, config.
func parseFailOn(classes []string, mode replay.Mode) (diff.Severity, bool, error) {
	failOn, config := diff.Minor, false
	for _, class := range classes {
		class = strings.TrimSpace(class)
		if class == "config" {
			config = true
			continue
		}
		sev, err := diff.ParseSeverity(class)
		if err != nil {
			return 0, false, exit.Usage("--fail-on %q: want info, minor, major, critical or config", class)
		}
		if mode != replay.ModeAdaptive {
			return 0, false, exit.Usage("--fail-on %s: severities apply to --mode adaptive (exact mode fails on any step that differs; config is its only class)", class)
		}
		failOn = sev
	}
	return failOn, config, nil
}

// judge writes the live exchange (to -w FILE, else to a temporary file),
// reads it and the capture with the diff engine and keeps the verdict in
// res. It returns how many differences count against the run.
func judge(o *Options, c *replay.Capture, res *replay.Result, target netip.AddrPort, rules *diff.Rules, failOn diff.Severity, failConfig bool) (int, error) {
	path := o.Write
	if path == "" {
		f, err := os.CreateTemp("", "bcwire-verify-*.pcap")
		if err != nil {
			return 0, &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("the live exchange: %w", err)}
		}
		path = f.Name()
		f.Close()
		defer os.Remove(path)
	}
	if err := output.WriteFile(path, nil, res.WriteLive); err != nil {
		return 0, exit.IOError(path, err)
	}
	// The capture's damage was listed already; the diff engine reads it
	// again without repeating it.
	quiet := &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}
	live, err := scan.LoadDiff(quiet, path, []netip.AddrPort{target}, rules, true, capture.Options{})
	if err != nil {
		return 0, err
	}
	live.Name = "live " + target.String()
	if o.Write != "" {
		live.Name += " (" + filepath.Base(o.Write) + ")"
	}
	var servers []netip.AddrPort
	if c.Server.IsValid() {
		servers = []netip.AddrPort{c.Server}
	}
	captured, err := scan.LoadDiff(quiet, o.File, servers, rules, true, capture.Options{})
	if err != nil {
		return 0, err
	}
	v := res.Verdict(live, captured, rules)
	failing := v.Count(failOn)
	if failConfig {
		for _, d := range v.Differences {
			if d.Kind == "config" && d.Severity < failOn {
				failing++
			}
		}
	}
	return failing, nil
}

// printSessions writes, above the verdict, one line per session (how far
// it got) and the configuration differences once for the run.
func printSessions(w io.Writer, r *replay.Result) {
	var config []string
	seen := map[string]bool{}
	for _, s := range r.Sessions {
		if s == nil {
			continue
		}
		joined := "did not reach the lobby"
		if s.Joined {
			joined = "joined"
		}
		fmt.Fprintf(w, "session %d  %s as %s  %s: %d checksum rounds, 0x28+Settings+GameInit in one datagram: %s, MISSION_INIT: %s; %d relayed game messages received; %d client datagrams sent\n",
			s.Session, s.Captured, s.Client, joined, s.ChecksumRounds, yes(s.Bundle), yes(s.MissionInit), s.Relayed, s.Sent)
		if s.Abandoned != "" {
			fmt.Fprintf(w, "  abandoned: %s; %d client datagrams not sent\n", s.Abandoned, s.NotSent)
		}
		for _, c := range configLines(s) {
			if !seen[c] {
				seen[c] = true
				config = append(config, c)
			}
		}
	}
	if r.Judged != nil {
		for _, d := range r.Judged.Differences {
			if d.Kind == "config" && !seen[d.Summary] {
				seen[d.Summary] = true
				config = append(config, strings.TrimPrefix(d.Summary, "configuration: "))
			}
		}
	}
	if len(config) > 0 {
		fmt.Fprintf(w, "configuration differs (not a protocol divergence; --fail-on config counts it): %s\n", strings.Join(config, "; "))
	}
	sm := r.Summary
	fmt.Fprintf(w, "steps: %d identical, %d equivalent, %d different, %d missing, %d unexpected%s (live game state never repeats the captured: the verdict compares it as diff does; --all-steps lists each step)\n",
		sm.Identical, sm.Equivalent, sm.Different, sm.Missing, sm.Unexpected, notDue(sm.NotDue))
	if r.ClockLeftOut > 0 {
		fmt.Fprintf(w, "asap timing: %d differences in rates and cadences left out (the clients ran on their own clock; --timing capture judges them)\n", r.ClockLeftOut)
	}
}

// printVerdict writes the adaptive verdict: the differences ranked as
// `bcwire diff` ranks them, ours being the live server.
func printVerdict(w io.Writer, r *replay.Result, color bool) {
	if r.Judged == nil {
		return
	}
	// Configuration differences are on the line above; the JSON keeps
	// them among the differences.
	v := *r.Judged
	v.Differences = append([]*diff.Difference(nil), v.Differences...)
	v.Drop("config")
	fmt.Fprintln(w)
	_ = report.WriteDiffText(w, &v, color)
}
