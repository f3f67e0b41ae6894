package replay

// The verdict of a live run: the diff engine's differences between the live
// exchange and the capture (one rule engine for `diff` and `verify`), plus
// what only a live run can know - sessions the server stopped answering or
// refused, joins that never reached the lobby, how long answers took.

import (
	"fmt"
	"sort"
	"time"

	"github.com/bcwire/bcwire/session/diff"
)

// Kinds of difference only a live run shows: they are not in `bcwire diff`
// of the server's own capture of the run.
const (
	KindNoAnswer      = "no-answer"      // the server stopped answering a session
	KindRefused       = "refused"        // the server refused a client (boot, checksum failure)
	KindJoinFailed    = "join-failed"    // a session never reached the lobby
	KindAnswerLatency = "answer-latency" // how long the join's answers took, live and captured
)

// IsLiveKind reports whether a difference of this kind comes from the live
// run itself rather than from the diff engine.
func IsLiveKind(kind string) bool {
	switch kind {
	case KindNoAnswer, KindRefused, KindJoinFailed, KindAnswerLatency:
		return true
	}
	return false
}

// Verdict compares the live exchange (live: WriteLive's capture read by the
// diff engine) with the replayed capture (captured) under rules, adds the
// live-only differences, and keeps the result in r.Verdict.
//
// With asap timing the clients ran on their own clock, not the capture's:
// the differences that measure time (ClockKinds) are left out and counted
// in r.ClockLeftOut.
func (r *Result) Verdict(live, captured *diff.Capture, rules *diff.Rules) *diff.Result {
	v := diff.Compare(live, captured, rules)
	if r.Timing == TimingASAP.String() {
		r.ClockLeftOut = v.Drop(ClockKinds...)
	}
	v.Add(r.liveDifferences(live, captured, rules)...)
	r.Judged = v
	return v
}

// ClockKinds are the kinds of difference that measure time - rates,
// cadences, retransmission and bundling - which an asap run, whose
// clients send as fast as the answers allow, cannot judge.
var ClockKinds = []string{"rate", "stateupdate-rate", "keepalive-cadence", "retransmissions", "datagram-size"}

func (r *Result) liveDifferences(live, captured *diff.Capture, rules *diff.Rules) []*diff.Difference {
	var out []*diff.Difference
	add := func(d *diff.Difference) {
		if sev, ok := rules.Severity[d.Kind]; ok {
			d.Severity = sev
		}
		out = append(out, d)
	}
	for _, s := range r.Sessions {
		if s == nil {
			continue
		}
		phase := diff.PhaseHandshake
		if s.Joined {
			phase = diff.PhaseGameplay
		}
		who := fmt.Sprintf("session %d (captured %s, live %s)", s.Session, s.Captured, s.Client)
		switch {
		case s.First != nil && s.First.Status == StatusRefused:
			add(&diff.Difference{Phase: phase, Severity: diff.Critical, Kind: KindRefused, Key: fmt.Sprintf("live refused %d", s.Session),
				Summary: fmt.Sprintf("%s: %s", who, s.First.Detail), Ours: s.First.Got,
				Stock: []string{"the captured server did not refuse this client"}, Sessions: []int{s.Session}})
		case s.Abandoned != "":
			detail := s.Abandoned
			if s.First != nil && s.First.Status == StatusNoAnswer {
				detail = s.First.Detail
			}
			add(&diff.Difference{Phase: phase, Severity: diff.Critical, Kind: KindNoAnswer, Key: fmt.Sprintf("live no-answer %d", s.Session),
				Summary: fmt.Sprintf("%s: the server stopped answering: %s", who, detail),
				Ours:    []string{s.Abandoned, fmt.Sprintf("%d client datagrams not sent", s.NotSent)},
				Stock:   []string{"the captured server answered to the end"}, Sessions: []int{s.Session}})
		}
		if !s.Joined {
			add(&diff.Difference{Phase: diff.PhaseHandshake, Severity: diff.Critical, Kind: KindJoinFailed, Key: fmt.Sprintf("live join-failed %d", s.Session),
				Summary: fmt.Sprintf("%s never reached the lobby: Settings and GameInit did not both arrive", who),
				Ours:    []string{fmt.Sprintf("%d checksum rounds answered, 0x28+Settings+GameInit bundle: %v", s.ChecksumRounds, s.Bundle)},
				Stock:   []string{"joined"}, Sessions: []int{s.Session}})
		}
	}
	if d := answerLatency(live, captured, rules); d != nil {
		add(d)
	}
	return out
}

// answerLatency sums up how long the server took to answer the join's
// client messages (connect, checksum responses, NewPlayerInGame), live
// (a round trip, as the client saw it) and captured. It is minor when the
// live median is later than the captured one by more than rules.Latency,
// else information.
func answerLatency(live, captured *diff.Capture, rules *diff.Rules) *diff.Difference {
	lo, ls := joinLatencies(live), joinLatencies(captured)
	if len(lo) == 0 || len(ls) == 0 {
		return nil
	}
	po, ps := percentile(lo, 0.5), percentile(ls, 0.5)
	sev := diff.Info
	if po-ps > time.Duration(rules.Latency) {
		sev = diff.Minor
	}
	show := func(v []time.Duration) []string {
		return []string{fmt.Sprintf("%d answers: p50 %s, p90 %s, max %s", len(v),
			ms(percentile(v, 0.5)), ms(percentile(v, 0.9)), ms(v[len(v)-1]))}
	}
	return &diff.Difference{Phase: diff.PhaseHandshake, Severity: sev, Kind: KindAnswerLatency, Key: "live answer-latency",
		Summary: fmt.Sprintf("the join's answers came after %s (median, as the live client saw it), the captured server's after %s", ms(po), ms(ps)),
		Ours:    show(lo), Stock: show(ls)}
}

func joinLatencies(c *diff.Capture) []time.Duration {
	var out []time.Duration
	for _, s := range c.Sessions {
		for _, st := range s.Steps {
			if st.Answered && st.Phase != diff.PhaseDisconnect {
				out = append(out, st.Latency)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// percentile of sorted durations (nearest rank).
func percentile(v []time.Duration, p float64) time.Duration {
	i := int(p*float64(len(v))+0.5) - 1
	i = max(0, min(i, len(v)-1))
	return v[i]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
