package iostreams

import (
	"bytes"
	"testing"
)

func TestProgress(t *testing.T) {
	var nilP *Progress
	nilP.Update(1) // no-op
	nilP.Clear()
	if p := NewProgress(&IOStreams{Err: &bytes.Buffer{}}, "x", 100); p != nil {
		t.Errorf("progress without a terminal")
	}
	var buf bytes.Buffer
	p := NewProgress(&IOStreams{Err: &buf, ErrTTY: true}, "big.pcap", 200<<20)
	p.Update(100 << 20)
	p.Update(150 << 20) // too soon: not shown
	p.Clear()
	if got := buf.String(); got != "\r\x1b[Kbig.pcap:  50% (100 of 200 MiB)\r\x1b[K" {
		t.Errorf("%q", got)
	}
}
