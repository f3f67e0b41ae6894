package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/bcwire/bcwire/session/diff"
)

// ErrUnreachable is returned when the target never answered the first
// session's first datagram that expects an answer.
var ErrUnreachable = errors.New("target unreachable")

// Verify plays the client side of every captured session of c against
// opts.Target, each from its own socket, starting them in join order, and
// compares what comes back with what the captured server sent. It returns
// once every session has finished (or ctx is cancelled) and every socket
// and goroutine it opened is closed.
func Verify(ctx context.Context, c *Capture, opts VerifyOptions) (*Result, error) {
	if !opts.Target.IsValid() {
		return nil, errors.New("verify: no target address")
	}
	if opts.AnswerTimeout <= 0 {
		opts.AnswerTimeout = time.Second
	}
	if opts.GiveUp <= 0 {
		opts.GiveUp = 5
	}
	if opts.Comparer == nil {
		if opts.Mode == ModeAdaptive {
			opts.Comparer = NewRulesComparer(diff.DefaultRules())
		} else {
			opts.Comparer = DefaultComparer{}
		}
	}
	sent := clientPayloads(c)
	// Join and leave order: a session's disconnect waits until every
	// session that connected before it in the capture has been given its
	// slot, so that slots, rosters and player lists are the captured ones
	// however fast the sessions run.
	slotted := make([]chan struct{}, len(c.Sessions))
	for i := range slotted {
		slotted[i] = make(chan struct{})
	}
	connectAt, leaveAt := make([]time.Time, len(c.Sessions)), make([]time.Time, len(c.Sessions))
	for i, sc := range c.Sessions {
		connectAt[i], leaveAt[i] = controlTimes(sc)
	}
	// sources[i] is session i's local address (invalid: opts.Listen), and
	// shared[i] the earlier session that sent from the same address last
	// (-1 for none): against a server that limits reconnects per address,
	// session i starts no sooner after it than in the capture.
	sources, err := sourcesFor(&opts, len(c.Sessions))
	if err != nil {
		return nil, err
	}
	shared := make([]int, len(c.Sessions))
	for i := range shared {
		shared[i] = -1
		for j := i - 1; j >= 0 && sources[i].IsValid(); j-- {
			if sources[j] == sources[i] {
				shared[i] = j
				break
			}
		}
	}
	liveStart := make([]time.Time, len(c.Sessions))
	allScripted := make(chan struct{})
	var scriptedLeft sync.WaitGroup
	scriptedLeft.Add(len(c.Sessions))
	go func() { scriptedLeft.Wait(); close(allScripted) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	res := &Result{Target: opts.Target.String(), Mode: opts.Mode.String(), Timing: opts.Timing.String(),
		Sessions: make([]*SessionResult, len(c.Sessions)), live: &liveRecorder{}}
	errs := make([]error, len(c.Sessions))
	var wg sync.WaitGroup
	start := time.Now()
	var first time.Time
	if len(c.Sessions) > 0 {
		first = c.Sessions[0].Start
	}
	prev := make(chan struct{})
	close(prev)
	for i, sc := range c.Sessions {
		ready := make(chan struct{})
		wg.Add(1)
		go func(i int, sc *Script, after <-chan struct{}, ready chan struct{}) {
			defer wg.Done()
			var scriptedOnce sync.Once
			scripted := func() { scriptedOnce.Do(scriptedLeft.Done) }
			defer scripted()
			var once sync.Once
			started := func() { once.Do(func() { close(ready) }) }
			defer started()
			select { // join order: after the previous session has been answered
			case <-after:
			case <-ctx.Done():
				return
			}
			if opts.Timing == TimingCapture {
				if !sleepCtx(ctx, time.Until(start.Add(sc.Start.Sub(first)))) {
					return
				}
			} else if j := shared[i]; j >= 0 && !liveStart[j].IsZero() {
				if !sleepCtx(ctx, time.Until(liveStart[j].Add(sc.Start.Sub(c.Sessions[j].Start)))) {
					return
				}
			}
			liveStart[i] = time.Now()
			others := map[string]bool{}
			for j, set := range sent {
				if j != i {
					for k := range set {
						others[k] = true
					}
				}
			}
			v := &verifier{opts: &opts, live: res.live, scripted: scripted, allScripted: allScripted, script: sc, started: started, first: i == 0, others: others, listen: opts.Listen}
			if v.listen == nil {
				ap := net.UDPAddrFromAddrPort(netip.AddrPortFrom(sources[i], 0))
				v.listen = func() (net.PacketConn, error) { return net.ListenUDP("udp4", ap) }
			}
			var once2 sync.Once
			v.slotted = func() { once2.Do(func() { close(slotted[i]) }) }
			if opts.Mode == ModeAdaptive {
				// The adaptive client learns its wire slot: the next
				// session starts once it has, so that the server hands
				// out slots in the captured join order however slowly
				// its first answer came (an answer past AnswerTimeout
				// would otherwise let the next client connect first).
				v.started = nil
				v.slotted = func() { once2.Do(func() { close(slotted[i]); started() }) }
			}
			defer v.slotted()
			for j := range c.Sessions {
				if j != i && !connectAt[j].IsZero() && !leaveAt[i].IsZero() && connectAt[j].Before(leaveAt[i]) {
					v.beforeLeave = append(v.beforeLeave, slotted[j])
				}
			}
			r, err := v.run(ctx)
			res.Sessions[i], errs[i] = r, err
			if errors.Is(err, ErrUnreachable) {
				cancel()
			}
		}(i, sc, prev, ready)
		prev = ready
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, ErrUnreachable) {
			return res, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return res, err
	}
	sum := &res.Summary
	for _, s := range res.Sessions {
		if s == nil {
			continue
		}
		sum.Sessions++
		if s.Joined {
			sum.Joined++
		}
		sum.Identical += s.Identical
		sum.Equivalent += s.Equivalent
		sum.Different += s.Different
		sum.Missing += s.Missing
		sum.Unexpected += s.Unexpected
		sum.NotDue += s.NotDue
		sum.Config += s.Config
		sum.NotReached += s.NotReached
		if s.OK() && s.Abandoned == "" && (!opts.FailOnConfig || s.Config == 0) {
			sum.SessionsOK++
			if s.Equivalent == 0 {
				sum.SessionsIdentical++
			}
		}
	}
	sum.OK = sum.SessionsOK == len(c.Sessions) && sum.Counts.OK() && (!opts.FailOnConfig || sum.Config == 0)
	return res, nil
}

// sourcesFor returns each session's local address: opts.Sources in turn,
// else against a loopback target 127.0.0.2 on (wrapping after
// 127.0.0.254), else the address that routes to the target. With
// opts.Listen set every address is invalid (Listen decides).
func sourcesFor(opts *VerifyOptions, n int) ([]netip.Addr, error) {
	out := make([]netip.Addr, n)
	if opts.Listen != nil {
		return out, nil
	}
	switch {
	case len(opts.Sources) > 0:
		for i := range out {
			out[i] = opts.Sources[i%len(opts.Sources)]
		}
	case opts.Target.Addr().Unmap().IsLoopback() && opts.Target.Addr().Unmap().Is4():
		for i := range out {
			out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i%253)})
		}
	default:
		ip, err := localIPFor(opts.Target)
		if err != nil {
			return nil, fmt.Errorf("verify: no route to %s: %w", opts.Target, err)
		}
		for i := range out {
			out[i] = ip
		}
	}
	return out, nil
}

// localIPFor is the local address the system would send to target from.
func localIPFor(target netip.AddrPort) (netip.Addr, error) {
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(target))
	if err != nil {
		return netip.Addr{}, err
	}
	defer c.Close()
	ap := c.LocalAddr().(*net.UDPAddr).AddrPort()
	return ap.Addr().Unmap(), nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
