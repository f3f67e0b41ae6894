package decodecmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

// decode -w out.pcap trace.log writes a capture of the log's datagrams as
// IPv4/UDP frames (reconstructed) that decodes as the capture the log was
// written from, once --server names the logging server; decode says what
// it made up.
func TestDecodeWritesPacketTraceLog(t *testing.T) {
	log := filepath.Join("..", "..", "..", "..", "dissect", "capture", "testdata", "tracelog", "join.packet_trace.log")
	pcap := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "join.pcap")
	out := filepath.Join(t.TempDir(), "out.pcap")
	_, errs, code := decodeArgs(t, "--server", "10.0.0.1:22101", "-w", out, log)
	if code != 0 || !strings.Contains(errs, "wrote 114 frames") || !strings.Contains(errs, "packet_trace.log: the logging server is shown as 10.0.0.1:22101") {
		t.Fatalf("-w: exit %d %s", code, errs)
	}
	rd, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := rd.Interface(0)
	rd.Close()
	if rd.Format() != capture.PCAP || info.LinkType != capture.RawIPv4 {
		t.Errorf("written as %v, link type %v", rd.Format(), info.LinkType)
	}
	// The times differ below the millisecond, the rest not at all.
	strip := func(s string) []string {
		var out []string
		for _, l := range lines(s) {
			f := strings.Fields(l)
			out = append(out, strings.Join(append(f[:1:1], f[2:]...), " "))
		}
		return out
	}
	want, _, _ := decodeArgs(t, pcap)
	got, _, code := decodeArgs(t, out)
	w, g := strip(want), strip(got)
	if code != 0 || len(w) < 100 || strings.Join(w, "\n") != strings.Join(g, "\n") {
		t.Errorf("exit %d; %d lines from the written capture, %d from the original", code, len(g), len(w))
	}
}
