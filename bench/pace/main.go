// Command pace replays a capture's UDP datagrams on loopback at the pace
// they were captured: one socket stands for the capture's server (bound to
// -port on 127.0.0.1), one for each client, and each datagram is sent from
// its sender's socket to its receiver's at its capture time relative to the
// first. bench/live-cpu.sh uses it to measure what `bcwire live` costs
// beside a real server's traffic.
//
//	go run ./bench/pace -port 24600 /tmp/p16.pcap
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

type packet struct {
	at       time.Duration
	src, dst netip.AddrPort
	payload  []byte
}

func main() {
	port := flag.Int("port", 24600, "loopback UDP port that plays the capture's server")
	server := flag.Int("server-port", 22101, "the capture's server port")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pace [-port N] CAPTURE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *port, uint16(*server)); err != nil {
		fmt.Fprintln(os.Stderr, "pace:", err)
		os.Exit(1)
	}
}

func run(path string, port int, serverPort uint16) error {
	rd, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer rd.Close()
	var pkts []packet
	var t0 time.Time
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if t0.IsZero() {
			t0 = p.Time
		}
		pkts = append(pkts, packet{p.Time.Sub(t0), p.Src, p.Dst, bytes.Clone(p.Payload)})
	}
	socks := map[netip.AddrPort]*net.UDPConn{}
	sock := func(ep netip.AddrPort) (*net.UDPConn, error) {
		if c, ok := socks[ep]; ok {
			return c, nil
		}
		a := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
		if ep.Port() == serverPort {
			a.Port = port
		}
		c, err := net.ListenUDP("udp4", a)
		if err != nil {
			return nil, err
		}
		// Nobody reads: a big buffer, and what overflows it is dropped
		// by the receiving socket, after the capture point.
		socks[ep] = c
		return c, nil
	}
	for _, p := range pkts {
		if _, err := sock(p.src); err != nil {
			return err
		}
		if _, err := sock(p.dst); err != nil {
			return err
		}
	}
	start := time.Now()
	for i, p := range pkts {
		if d := time.Until(start.Add(p.at)); d > 0 {
			time.Sleep(d)
		}
		to := socks[p.dst].LocalAddr().(*net.UDPAddr)
		if _, err := socks[p.src].WriteToUDP(p.payload, to); err != nil {
			return fmt.Errorf("datagram %d: %w", i+1, err)
		}
	}
	fmt.Fprintf(os.Stderr, "pace: %d datagrams in %s\n", len(pkts), time.Since(start).Round(time.Millisecond))
	for _, c := range socks {
		c.Close()
	}
	return nil
}
