// This file holds the package example: writing a capture and reading it
// back with the error handling a tool should use.

package capture_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

func Example() {
	// Write a small capture: one datagram, one that is fragmented at the
	// default MTU of 1500, and a record that is not even an IPv4 header.
	var file bytes.Buffer
	w, _ := capture.NewWriter(&file, capture.PCAPNG, capture.Ethernet)
	t := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	host := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.0.2:22101")
	w.WriteUDP(t, client, host, []byte("join"))
	w.WriteUDP(t.Add(time.Second), host, client, make([]byte, 3000))
	w.WriteRaw(t.Add(2*time.Second), []byte("garbage"))
	w.Flush()

	r, err := capture.NewReader(&file)
	if err != nil {
		fmt.Println(err) // not a capture file at all
		return
	}
	for {
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if pe, ok := errors.AsType[*capture.PacketError](err); ok {
			fmt.Println("damaged:", pe) // report, then carry on
			continue
		}
		if err != nil {
			fmt.Println(err) // I/O error
			return
		}
		fmt.Printf("frame %d %v -> %v: %d bytes (reassembled %v)\n", p.Frame, p.Src, p.Dst, len(p.Payload), p.Reassembled)
	}
	st := r.Stats()
	fmt.Printf("%d records, %d UDP, %d damaged\n", st.Records, st.UDP, st.Damaged)
	// Output:
	// frame 1 10.0.0.2:22101 -> 10.0.0.1:22101: 4 bytes (reassembled false)
	// frame 4 10.0.0.1:22101 -> 10.0.0.2:22101: 3000 bytes (reassembled true)
	// damaged: frame 5 (file offset 3380): capture: bad link-layer header: Ethernet frame of 7 bytes
	// 5 records, 2 UDP, 1 damaged
}
