// Command repeat writes a capture made of N copies of another one, each copy
// shifted in time to start after the previous one ends (plus a gap), the way
// `mergecap -a` of N time-shifted copies would. bench/compare.sh uses it to
// build a large capture from testdata/pcaps/battle.pcap.
//
//	go run ./bench/repeat -n 200 -o big.pcap testdata/pcaps/battle.pcap
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

func main() {
	n := flag.Int("n", 100, "number of copies")
	out := flag.String("o", "", "output pcap file (required)")
	gap := flag.Duration("gap", 5*time.Second, "capture time between the end of one copy and the start of the next")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: repeat -n N -o OUT.pcap IN.pcap")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, *n, *gap); err != nil {
		fmt.Fprintln(os.Stderr, "repeat:", err)
		os.Exit(1)
	}
}

func run(src, dst string, n int, gap time.Duration) error {
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
	for i := 0; i < n; i++ {
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
			if err := w.WriteUDP(p.Time.Add(shift), p.Src, p.Dst, p.Payload); err != nil {
				rd.Close()
				return err
			}
		}
		rd.Close()
		shift += last.Sub(first) + gap
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}
