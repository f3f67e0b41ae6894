package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// The receive side both modes share: one datagram at a time from the
// target, until the mode has nothing more to wait for.

// awaitAnswers receives datagrams from the target and hands each to take
// until pending reports nothing open (or the deadline it reports passed)
// and floor is reached. pending reports whether anything is still awaited
// and until when it is worth waiting for it.
func (v *verifier) awaitAnswers(ctx context.Context, floor time.Time, pending func() (open bool, deadline time.Time), take func([]byte) error) error {
	for {
		now := time.Now()
		wake := floor
		if open, deadline := pending(); open {
			if !now.Before(deadline) {
				if !now.Before(floor) {
					return nil
				}
			} else if wake.IsZero() || deadline.After(wake) {
				wake = deadline
			}
		} else if !now.Before(floor) {
			return nil
		}
		data, err := v.readAnswer(ctx, wake)
		if err != nil {
			return err
		}
		if data == nil {
			continue
		}
		if err := take(data); err != nil {
			return err
		}
	}
}

// readAnswer waits until wake for one datagram from the target and
// records it. It returns nil data and no error on a timeout or a datagram
// from anywhere else.
func (v *verifier) readAnswer(ctx context.Context, wake time.Time) ([]byte, error) {
	if err := v.pc.SetReadDeadline(wake); err != nil {
		return nil, err
	}
	var (
		n     int
		from  netip.AddrPort
		stamp time.Time
		err   error
	)
	if v.stamped {
		n, from, stamp, err = readStamped(v.pc, v.buf, v.oob[:])
	} else {
		var addr net.Addr
		n, addr, err = v.pc.ReadFrom(v.buf)
		if ua, ok := addr.(*net.UDPAddr); ok {
			from = ua.AddrPort()
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil
		}
		return nil, fmt.Errorf("session %d: %w", v.script.Index+1, err)
	}
	if !from.IsValid() || !sameEndpoint(from, v.opts.Target) {
		return nil, nil
	}
	data := append([]byte(nil), v.buf[:n]...)
	v.received++
	v.observeAt(stamp, v.opts.Target, v.local, data)
	return data, nil
}

func sameEndpoint(a, b netip.AddrPort) bool {
	return a.Addr().Unmap() == b.Addr().Unmap() && a.Port() == b.Port()
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
