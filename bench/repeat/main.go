// Command repeat writes a capture made of N copies of another one, each copy
// shifted in time to start after the previous one ends (plus a gap), the way
// `mergecap -a` of N time-shifted copies would. bench/compare.sh uses it to
// build a large capture from testdata/pcaps/battle.pcap; the tests use it to
// make the same clients reconnect from the same addresses and ports.
//
//	go run ./bench/repeat -n 200 -o big.pcap testdata/pcaps/battle.pcap
//
// -drop-disconnects leaves out every datagram that carries a disconnect
// (transport type 0x05): each copy's clients then simply stop, as a client
// that crashed does, and connect again in the next copy.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

func main() {
	n := flag.Int("n", 100, "number of copies")
	out := flag.String("o", "", "output pcap file (required)")
	gap := flag.Duration("gap", 5*time.Second, "capture time between the end of one copy and the start of the next")
	dropDisconnects := flag.Bool("drop-disconnects", false, "leave out the datagrams that carry a disconnect (type 0x05)")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: repeat [-gap D] [-drop-disconnects] -n N -o OUT.pcap IN.pcap")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, options{n: *n, gap: *gap, dropDisconnects: *dropDisconnects}); err != nil {
		fmt.Fprintln(os.Stderr, "repeat:", err)
		os.Exit(1)
	}
}

type options struct {
	n               int           // copies
	gap             time.Duration // between the end of a copy and the start of the next
	dropDisconnects bool
}

func run(src, dst string, o options) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := capture.NewWriter(bw, capture.PCAP, capture.Ethernet)
	if err != nil {
		return err
	}
	var shift time.Duration
	var plain []byte
	var dg dissect.Datagram
	for i := 0; i < o.n; i++ {
		rd, err := capture.Open(src)
		if err != nil {
			return err
		}
		var first, last time.Time
		for {
			p, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rd.Close()
				return fmt.Errorf("%s: %w", src, err)
			}
			if first.IsZero() {
				first = p.Time
			}
			last = p.Time
			if o.dropDisconnects && !dissect.IsGameSpy(p.Payload) {
				plain = append(plain[:0], p.Payload...)
				dissect.Decrypt(plain, p.Payload)
				if dg.Parse(plain) == nil && hasDisconnect(&dg) {
					continue
				}
			}
			if err := w.WriteUDP(p.Time.Add(shift), p.Src, p.Dst, p.Payload); err != nil {
				rd.Close()
				return err
			}
		}
		rd.Close()
		shift += last.Sub(first) + o.gap
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// hasDisconnect reports whether dg carries a disconnect message.
func hasDisconnect(dg *dissect.Datagram) bool {
	for i := range dg.Messages {
		if dg.Messages[i].Type == dissect.TypeDisconnect {
			return true
		}
	}
	return false
}
