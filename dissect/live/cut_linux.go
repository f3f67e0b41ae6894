//go:build linux

package live

import (
	"io"
	"time"

	"github.com/google/gopacket"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Ending a capture without losing its end.
//
// The kernel counts a frame as passed (PACKET_STATISTICS' tp_packets) in
// the same critical section in which it queues it: into the ring, or onto
// the socket's receive queue. So the frames queued to a socket are exactly
// the frames counted, less those counted as dropped, in queue order. Cut
// swaps in a filter that rejects everything, so that no frame is counted
// after it, and reads the final counts; ReadFrame then returns the queued
// frames until as many were taken as the kernel counted.
//
// The ring hands a block to the process only when it is full or its retire
// timeout (Options.Poll) passes; the kernel's timer retires the block still
// being filled at the cut, as it does for a quiet capture, and the drain
// waits for it (libpcap relies on the same timer). A frame that does not
// come within drainWait of the last one is reported by Unread, never taken
// for a frame that was not there.

// drainWait is how long the drain waits for the next frame before it gives
// the rest up as unread: many retire timeouts, as the kernel's timer, not
// this process, retires the block, however busy the machine.
func (h *Handle) drainWait() time.Duration { return max(20*h.poll, 2*time.Second) }

// Cut ends the capture: the kernel passes no frame to h from now on, and
// the returned counts are final (Stats returns them too). ReadFrame then
// returns the frames passed before the cut, in order, and io.EOF after the
// last. SetFilter does nothing after Cut. Calling Cut again returns the
// same counts.
func (h *Handle) Cut() (KernelStats, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cut {
		return h.stats, nil
	}
	if h.fd < 0 {
		h.cut = true
		return h.stats, nil
	}
	// Reject everything first, then read the counts: a frame the old
	// filter let through is counted, and queued, before the counts are
	// read, or after, and then it is not among those ReadFrame returns.
	// (If the filter cannot be swapped, frames keep coming, but only
	// those counted here are read.)
	aerr := h.attach([]bpf.Instruction{bpf.RetConstant{Val: 0}})
	st, err := h.readStats()
	h.cut = true
	h.target = st.Packets - st.Drops
	h.drainBy = time.Now().Add(h.drainWait())
	if aerr != nil {
		err = aerr
	}
	return st, err
}

// taken is the number of frames taken from the kernel since Open: returned
// by ReadFrame or skipped.
func (h *Handle) taken() uint64 {
	if h.ring != nil {
		return h.ring.taken
	}
	return h.received
}

// Unread is the number of frames the kernel passed before Cut that
// ReadFrame has not returned (yet, or at all if the drain gave up on them):
// 0 once ReadFrame returned io.EOF after a complete drain.
func (h *Handle) Unread() uint64 {
	if !h.cut {
		return 0
	}
	return h.target - min(h.taken(), h.target)
}

// drainFrame is ReadFrame after Cut.
func (h *Handle) drainFrame() ([]byte, gopacket.CaptureInfo, error) {
	for {
		if h.taken() >= h.target || h.fd < 0 {
			return nil, gopacket.CaptureInfo{}, io.EOF
		}
		if h.ring != nil {
			if frame, ci, ok := h.ring.next(h.ifindex, h.loopback); ok {
				h.drainBy = time.Now().Add(h.drainWait())
				return frame, ci, nil
			}
		} else {
			length, oobn, _, from, err := unix.Recvmsg(h.fd, h.buf, h.oob, unix.MSG_TRUNC|unix.MSG_DONTWAIT)
			if err == nil {
				h.drainBy = time.Now().Add(h.drainWait())
				if frame, ci, ok := h.received1(length, oobn, from); ok {
					return frame, ci, nil
				}
				continue
			}
		}
		left := time.Until(h.drainBy)
		if left <= 0 {
			return nil, gopacket.CaptureInfo{}, io.EOF // Unread says how many never came
		}
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(min(left, h.poll)/time.Millisecond)+1)
		if err == nil && n > 0 && fds[0].Revents&unix.POLLIN == 0 {
			// An error is pending (the device went down): the frames
			// already queued can still be read, so wait and look again
			// rather than spin.
			time.Sleep(10 * time.Millisecond)
		}
	}
}
