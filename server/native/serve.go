package native

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// Serve runs the server on pc until ctx is done, then tells every client
// it is going (a graceful disconnect) and returns with all its goroutines
// ended. It does not close pc. A read error other than the shutdown's own
// ends Serve with that error.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn) error {
	local := addrPort(pc.LocalAddr())
	s.Attach(local, func(to netip.AddrPort, wire []byte) {
		_, _ = pc.WriteTo(wire, net.UDPAddrFromAddrPort(to))
	})
	s.log.Info("serving", "addr", local.String(), "name", s.o.Config.Name, "map", s.o.Config.Map,
		"max_players", s.o.Config.MaxPlayers)

	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() { // the ticker
		defer wg.Done()
		t := time.NewTicker(s.t.Tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s.Tick(now)
			}
		}
	}()
	wg.Add(1)
	go func() { // unblock the read on shutdown
		defer wg.Done()
		select {
		case <-ctx.Done():
			_ = pc.SetReadDeadline(time.Now())
		case <-done:
		}
	}()

	buf := make([]byte, 2048)
	var err error
	for {
		n, from, rerr := pc.ReadFrom(buf)
		if ctx.Err() != nil {
			break
		}
		if rerr != nil {
			if errors.Is(rerr, os.ErrDeadlineExceeded) {
				continue
			}
			var ne net.Error
			if errors.As(rerr, &ne) && ne.Timeout() {
				continue
			}
			err = rerr
			break
		}
		if ap := addrPort(from); ap.IsValid() {
			s.HandleDatagram(time.Now(), ap, buf[:n])
		}
	}
	close(done)
	wg.Wait()
	s.Shutdown(time.Now())
	_ = pc.SetReadDeadline(time.Time{})
	return err
}

// Shutdown sends every connected client a graceful disconnect and forgets
// them.
func (s *Server) Shutdown(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.sortedPeers() {
		if p.phase != phClosing && p.phase != 0 {
			p.conn.Queue(dissect.TypeDisconnect, disconnectPayload(p), true, true)
			s.flush(now, p, true)
		}
		s.forget(p)
	}
	s.finalHeartbeats(now)
	s.log.Info("stopped", "joined", s.stats.Joined, "relayed", s.stats.Relayed, "gamespy", s.stats.GameSpy,
		"dropped", s.stats.Dropped, "drops", s.stats.Drops, "evicted", s.stats.Evicted, "frag_evicted", s.stats.FragEvicted, "frag_refused", s.stats.FragRefused)
}

func addrPort(a net.Addr) netip.AddrPort {
	switch v := a.(type) {
	case *net.UDPAddr:
		ap := v.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	if a == nil {
		return netip.AddrPort{}
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}
