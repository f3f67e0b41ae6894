package decodecmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// jsonArray writes the array that the lines make, however the lines are cut
// into writes.
func TestJSONArrayOfLines(t *testing.T) {
	var lines bytes.Buffer
	for i := range 50 {
		fmt.Fprintf(&lines, `{"frame":%d,"name":"x\ny"}`+"\n", i)
	}
	in := lines.Bytes()
	for _, cut := range []int{1, 7, 64, len(in)} {
		var out bytes.Buffer
		ja := newJSONArray(&out)
		for p := in; len(p) > 0; {
			n := min(cut, len(p))
			if _, err := ja.Write(p[:n]); err != nil {
				t.Fatal(err)
			}
			p = p[n:]
		}
		if err := ja.Close(); err != nil {
			t.Fatal(err)
		}
		var objs []struct{ Frame int }
		if err := json.Unmarshal(out.Bytes(), &objs); err != nil {
			t.Fatalf("writes of %d bytes: not a JSON array: %v\n%s", cut, err, out.Bytes())
		}
		if len(objs) != 50 || objs[49].Frame != 49 {
			t.Fatalf("writes of %d bytes: %d objects, last %+v", cut, len(objs), objs[len(objs)-1])
		}
	}
	var out bytes.Buffer
	ja := newJSONArray(&out)
	if err := ja.Close(); err != nil || out.String() != "[]\n" {
		t.Fatalf("no lines: %q %v", out.String(), err)
	}
}

// A write of many lines costs work in proportion to its bytes: the printer
// writes batches of a hundred lines and more, and a writer that copied the
// rest of the batch for each line (as it once did, to search it for the
// newline) made -T json take 13 times as long as --json. The heap it
// allocates is measured rather than its time: after the first write has
// sized its buffer, a write allocates nothing; the quadratic form allocated
// the batch's size over again for each line.
func TestJSONArrayWriteIsLinear(t *testing.T) {
	line := []byte(`{"frame":1,"time":"2026-01-10T20:00:23.360608479Z","name":"StateUpdate"}` + "\n")
	batch := bytes.Repeat(line, 2048) // 150 KB
	ja := newJSONArray(discard{})
	if _, err := ja.Write(batch); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 4 {
		if _, err := ja.Write(batch); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Slack for whatever else the runtime allocates meanwhile; the
	// quadratic form allocated about 150 MB per write.
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(batch)) {
		t.Fatalf("4 writes of %d lines (%d bytes) allocated %d bytes, want none", 2048, len(batch), got)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
