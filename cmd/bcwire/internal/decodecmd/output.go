package decodecmd

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"

	"github.com/bcwire/bcwire/dissect/flow"
)

// jsonArray turns the NDJSON that --json writes into one JSON array, as
// tshark's -T json writes: "[", the objects separated by commas, "]".
// decode's JSON objects hold no raw newline (strings escape it), so each
// newline ends an object. A Write looks at each byte of p once: the
// printer hands it whole batches of lines (tens of kilobytes), and a search
// that copied the rest of p for each line (strings.IndexByte(string(p)))
// made -T json quadratic in the batch, 35 s where --json took 2.7 s.
type jsonArray struct {
	w       io.Writer
	started bool
	pending bool // an object ended; its separator waits for the next
	buf     []byte
}

func newJSONArray(w io.Writer) *jsonArray { return &jsonArray{w: w} }

func (j *jsonArray) Write(p []byte) (int, error) {
	n := len(p)
	b := j.buf[:0]
	if !j.started {
		j.started = true
		b = append(b, "[\n"...)
	}
	for len(p) > 0 {
		if j.pending {
			b = append(b, ",\n"...)
			j.pending = false
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b = append(b, p...)
			break
		}
		b = append(b, p[:i]...)
		j.pending = true
		p = p[i+1:]
	}
	j.buf = b
	if _, err := j.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// Close ends the array; an empty one when nothing was written.
func (j *jsonArray) Close() error {
	var err error
	switch {
	case !j.started:
		_, err = io.WriteString(j.w, "[]\n")
	case j.pending:
		_, err = io.WriteString(j.w, "\n]\n")
	default:
		_, err = io.WriteString(j.w, "]\n")
	}
	j.started, j.pending = true, false
	return err
}

// serverSeen notes which --server servers had traffic, so that a server
// with none is said to have none rather than met with silence.
type serverSeen map[netip.AddrPort]bool

func (s *serverSeen) note(servers []netip.AddrPort, r *flow.Record) {
	if len(servers) == 0 || !r.Server.IsValid() || (*s)[r.Server] {
		return
	}
	if *s == nil {
		*s = serverSeen{}
	}
	(*s)[r.Server] = true
}

func (s serverSeen) report(w io.Writer, servers []netip.AddrPort) {
	for _, ap := range servers {
		if !s[ap] {
			fmt.Fprintf(w, "bcwire: no traffic of the server %s in the capture (--server looks for it on any port; leave it out to see every server found)\n", ap)
		}
	}
}
