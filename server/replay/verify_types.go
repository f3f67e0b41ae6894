package replay

// What Verify is told and what it reports: modes, options, steps, counts
// and results.

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/bcwire/bcwire/server/manifest"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/diff"
)

// Mode is how Verify plays and compares.
type Mode int

const (
	// ModeExact sends the captured client datagrams unchanged (address
	// fields rewritten) and expects byte-identical answers.
	ModeExact Mode = iota
	// ModeAdaptive is a protocol-aware client: it ACKs what it receives,
	// numbers its reliable messages as captured, answers checksum requests
	// with the captured response for that round and compares decoded
	// messages rather than datagrams.
	ModeAdaptive
)

func (m Mode) String() string {
	if m == ModeAdaptive {
		return "adaptive"
	}
	return "exact"
}

// ParseMode reads "exact" or "adaptive".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "exact":
		return ModeExact, nil
	case "adaptive":
		return ModeAdaptive, nil
	}
	return 0, fmt.Errorf("mode %q: want exact or adaptive", s)
}

// VerifyOptions tune Verify.
type VerifyOptions struct {
	Target netip.AddrPort // the server under test
	Mode   Mode
	Timing Timing
	// AnswerTimeout is how long to wait for an expected answer after the
	// last datagram that arrived (default 1s). With TimingCapture a server
	// datagram is not waited for before its captured offset.
	AnswerTimeout time.Duration
	// GiveUp abandons a session after this many steps in a row that
	// expected answers and received nothing (default 5).
	GiveUp int
	// Comparer judges decoded game messages: by default, in adaptive mode,
	// a RulesComparer with session/diff's DefaultRules (the diff engine's
	// tolerances, plus GameSpyIgnore), in exact mode DefaultComparer
	// (field for field, game time aside).
	Comparer Comparer
	// Listen opens each session's socket. The default listens on UDP port
	// 0 of the session's address in Sources.
	Listen func() (net.PacketConn, error)
	// Logf, when set, receives progress lines.
	Logf func(format string, args ...any)
	// Manifest, when set (adaptive mode), answers each checksum request it
	// has a round for with its response instead of the captured one: a
	// server that checks the answers against its own manifest accepts them.
	Manifest manifest.Manifest
	// Sources are the local addresses sessions send from, one per session
	// in join order (the list repeats when there are more sessions). By
	// default, against a loopback target every session has its own
	// address, 127.0.0.2 on, so that a server's per-address limits see one
	// client per address as in the capture; otherwise all send from the
	// address that routes to the target. Ignored when Listen is set.
	Sources []netip.Addr
	// FailOnConfig counts configuration differences (status "config")
	// against the run (Summary.OK).
	FailOnConfig bool
}

// Step statuses.
const (
	StatusSent       = "sent"       // a client datagram (or, adaptive, message) sent
	StatusNotSent    = "not-sent"   // a client step of an abandoned session
	StatusIdentical  = "identical"  // the server's datagram arrived byte for byte
	StatusEquivalent = "equivalent" // it differs in bytes but decodes to the same content
	StatusDifferent  = "different"  // something else arrived in its place
	StatusMissing    = "missing"    // nothing arrived for it
	StatusUnexpected = "unexpected" // a datagram arrived that nothing in the capture accounts for
	// StatusNotDue (adaptive, asap timing): a message the server sends on
	// its own clock or unprompted (keepalive, StateUpdate, another
	// client's relayed traffic) that the session ended before; not a
	// divergence, since an asap client runs ahead of the server's clock.
	StatusNotDue = "not-due"
	// StatusConfig: the server's message arrived and differs only in how
	// the server is set up (ConfigFields: GameSpy name, map, limits,
	// player list; Settings values; match settings). Step.Config lists
	// every such difference. Not a protocol divergence, and not counted
	// against the run unless VerifyOptions.FailOnConfig.
	StatusConfig = "config"
	// StatusNotReached: a server step of a session abandoned before it
	// (no timing: the session never got there).
	StatusNotReached = "not-reached"
	// StatusNoAnswer: the synthetic step that opens an abandoned
	// session's report: the server stopped answering after the client
	// step it names.
	StatusNoAnswer = "no-answer"
	// StatusRefused: the synthetic step that opens the report of a
	// session the server refused (a boot, or a checksum failure 0x22 or
	// 0x23): what it sent, and after which client step.
	StatusRefused = "refused"
)

// Step is one step of a verified session.
type Step struct {
	Step   int     `json:"step"`            // index in the script; -1 for unexpected datagrams
	Frame  int     `json:"frame,omitempty"` // capture frame of the step
	Dir    string  `json:"dir"`             // "C->S" or "S->C"
	Status string  `json:"status"`
	AtMS   float64 `json:"at_ms,omitempty"` // live offset from the session's start; absent for steps not reached
	// Rewritten lists the address fields rewritten in a sent datagram.
	Rewritten []string `json:"rewritten,omitempty"`
	// Detail says how a different step differs.
	Detail string `json:"detail,omitempty"`
	// Expected and Got are the decoded captured and received datagrams
	// (or messages), for steps that are not identical.
	Expected []string `json:"expected,omitempty"`
	Got      []string `json:"got,omitempty"`
	// Config lists every configuration difference of a "config" step.
	Config []string `json:"config,omitempty"`
}

// IsDivergence reports whether the step shows a difference.
func (s *Step) IsDivergence() bool {
	switch s.Status {
	case StatusDifferent, StatusMissing, StatusUnexpected, StatusNoAnswer, StatusRefused:
		return true
	}
	return false
}

// Text is a readable form of the step with both sides decoded.
func (s *Step) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "step %d", s.Step)
	if s.Frame > 0 {
		fmt.Fprintf(&sb, " (capture frame %d)", s.Frame)
	}
	if s.Status == StatusNotReached || s.Status == StatusNoAnswer || s.Status == StatusRefused {
		fmt.Fprintf(&sb, " %s: %s", s.Dir, s.Status)
	} else {
		fmt.Fprintf(&sb, " %s at +%.3fs: %s", s.Dir, s.AtMS/1000, s.Status)
	}
	if s.Detail != "" {
		sb.WriteString(": " + s.Detail)
	}
	sb.WriteString("\n")
	if len(s.Expected) > 0 || len(s.Got) > 0 {
		exp, got := s.Expected, s.Got
		if len(exp) == 0 {
			exp = []string{"(nothing)"}
		}
		if len(got) == 0 {
			got = []string{"(nothing)"}
		}
		sb.WriteString(SideBySide("captured", exp, "received", got))
	}
	return sb.String()
}

// Counts are the step totals of a session or of a whole run.
type Counts struct {
	Identical  int `json:"identical"`
	Equivalent int `json:"equivalent"`
	Different  int `json:"different"`
	Missing    int `json:"missing"`
	Unexpected int `json:"unexpected"`
	NotDue     int `json:"not_due"`
	Config     int `json:"config"`      // steps that differ only in configuration
	NotReached int `json:"not_reached"` // server steps of abandoned sessions never reached
}

// OK reports whether nothing differed.
func (c Counts) OK() bool { return c.Different == 0 && c.Missing == 0 && c.Unexpected == 0 }

func (c *Counts) add(status string) {
	switch status {
	case StatusIdentical:
		c.Identical++
	case StatusEquivalent:
		c.Equivalent++
	case StatusDifferent:
		c.Different++
	case StatusMissing:
		c.Missing++
	case StatusUnexpected:
		c.Unexpected++
	case StatusNotDue:
		c.NotDue++
	case StatusConfig:
		c.Config++
	case StatusNotReached:
		c.NotReached++
	}
}

// SessionResult is the verification of one captured session.
type SessionResult struct {
	Session  int    `json:"session"`  // 1-based, in join order
	Client   string `json:"client"`   // the live client endpoint
	Captured string `json:"captured"` // the captured client endpoint
	// Joined: the session reached the lobby (Settings and GameInit
	// received from the server).
	Joined bool           `json:"joined"`
	Phases session.Phases `json:"phases"`
	// ChecksumRounds counts the checksum rounds the server asked for and
	// the client answered; Bundle is ChecksumComplete (0x28), Settings and
	// GameInit arriving in one datagram; MissionInit is MISSION_INIT
	// arriving.
	ChecksumRounds int  `json:"checksum_rounds"`
	Bundle         bool `json:"bundle"`
	MissionInit    bool `json:"mission_init"`
	// Relayed counts the game messages received that another captured
	// session's client sent: relayed traffic (adaptive mode).
	Relayed int `json:"relayed"`
	Counts
	Sent    int `json:"sent"`     // client datagrams (or messages) sent
	NotSent int `json:"not_sent"` // client steps not played (abandoned session)
	// Abandoned says why the session stopped early.
	Abandoned string `json:"abandoned,omitempty"`
	// First is the first divergence, nil when there is none.
	First *Step  `json:"first_divergence,omitempty"`
	Steps []Step `json:"steps"`
}

// Summary totals a run.
type Summary struct {
	Sessions int `json:"sessions"`
	Joined   int `json:"joined"`
	Counts
	// Identical (sessions whose every server step was identical) and OK
	// (identical or equivalent throughout).
	SessionsIdentical int  `json:"sessions_identical"`
	SessionsOK        int  `json:"sessions_ok"`
	OK                bool `json:"ok"`
}

// Result is what Verify found.
type Result struct {
	Target   string           `json:"target"`
	Mode     string           `json:"mode"`
	Timing   string           `json:"timing"`
	Sessions []*SessionResult `json:"sessions"`
	Summary  Summary          `json:"summary"`
	// Damage is the capture's damage (nil when clean): see damage.go.
	Damage *DamageReport `json:"capture_damage,omitempty"`
	// NonStock is the capture's non-stock messages (nil when none): see
	// nonstock.go. They are not damage.
	NonStock *NonStockReport `json:"capture_nonstock,omitempty"`

	// Judged is the verdict (adaptive mode): the diff engine's differences
	// between the live exchange and the capture, and the live-only ones
	// (see Verdict); nil until Verdict is called.
	Judged *diff.Result `json:"verdict,omitempty"`
	// ClockLeftOut counts the differences in rates and cadences an asap
	// run left out of the verdict (see Verdict).
	ClockLeftOut int `json:"clock_differences_left_out,omitempty"`

	live *liveRecorder // every datagram of the run: WriteLive
}
