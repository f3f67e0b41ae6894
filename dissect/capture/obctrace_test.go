package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

func obcRecord(b []byte, tick uint32, dir, slot byte, msg []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, tick)
	b = append(b, dir, slot)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(msg)))
	return append(b, msg...)
}

// OBCTRACE records become datagrams: game messages in one data message,
// the relayed keepalive bodies keepalives again, times from the ticks
// (100 ms each); damaged records are named and skipped.
func TestOBCTrace(t *testing.T) {
	stateUpdate := []byte{0x1C, 0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0x00, 0x80, 0x3F, 0x00}
	keepalive := []byte{0x80, 0x00, 0x00, 0x02, 0x7F, 0x00, 0x00, 0x01, 0x42, 0x00, 0x6F, 0x00, 0x74, 0x00, 0x32, 0x00, 0x00, 0x00}
	b := []byte("OBCTRACE")
	b = obcRecord(b, 3, 'S', 1, stateUpdate)
	b = obcRecord(b, 9, 'R', 2, keepalive)
	b = obcRecord(b, 9, 'X', 2, stateUpdate) // bad direction
	b = obcRecord(b, 10, 'R', 0, nil)        // empty
	b = obcRecord(b, 11, 'R', 0, stateUpdate)
	b = append(b, 1, 2, 3) // cut record header

	rd, err := capture.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		plain []byte
		tick  int
		err   error
	}
	for i, w := range []want{
		{append([]byte{0x03, 0x01, 0x32, 13, 0x00}, stateUpdate...), 3, nil},
		{append([]byte{0x01, 0x01, 0x00, 20}, keepalive...), 9, nil},
		{nil, 0, capture.ErrBadRecord},
		{nil, 0, capture.ErrBadRecord},
		{append([]byte{0x01, 0x01, 0x32, 13, 0x00}, stateUpdate...), 11, nil},
		{nil, 0, capture.ErrTruncated},
	} {
		p, err := rd.Next()
		if w.err != nil {
			if !errors.Is(err, w.err) {
				t.Errorf("record %d: %v, want %v", i, err, w.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		plain := make([]byte, len(p.Payload))
		dissect.Decrypt(plain, p.Payload)
		if !bytes.Equal(plain, w.plain) {
			t.Errorf("record %d: % X\nwant % X", i, plain, w.plain)
		}
		if got := p.Time.Sub(time.Unix(0, 0)); got != time.Duration(w.tick)*capture.OBCTraceTick {
			t.Errorf("record %d: time %v", i, got)
		}
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
}
