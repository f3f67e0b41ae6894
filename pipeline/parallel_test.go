package pipeline_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
)

// decodeAll runs one capture through Run (workers 0) or RunParallel and
// returns the verbose decode output, the JSON output and the summary.
func decodeAll(t *testing.T, path string, workers, limit int) (string, flow.Summary) {
	t.Helper()
	rd, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var text, js bytes.Buffer
	pt := report.NewDecodePrinter(&text, report.DecodeVerbose, false)
	pj := report.NewDecodePrinter(&js, report.DecodeJSON, false)
	n := 0
	emit := func(r *flow.Record) bool {
		if err := pt.Print(r); err != nil {
			t.Fatal(err)
		}
		if err := pj.Print(r); err != nil {
			t.Fatal(err)
		}
		n++
		return limit == 0 || n < limit
	}
	tr := flow.New(flow.Options{})
	var sum flow.Summary
	if workers == 0 {
		sum, err = flow.Run(rd, tr, emit)
	} else {
		sum, err = flow.RunParallel(rd, tr, workers, emit)
	}
	if err != nil {
		t.Fatal(err)
	}
	pt.Flush()
	pj.Flush()
	return text.String() + js.String(), sum
}

// RunParallel must produce exactly what Run does, record for record, on
// every bundled capture (damaged and lossy ones included), with any number
// of workers, and when the consumer stops early.
func TestRunParallelMatchesRun(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Ext(f) == ".golden" || filepath.Ext(f) == ".gz" {
			continue
		}
		want, wsum := decodeAll(t, f, 0, 0)
		if want == "" {
			t.Fatalf("%s: no output", f)
		}
		for _, w := range []int{1, 2, 3} {
			got, gsum := decodeAll(t, f, w, 0)
			if got != want {
				t.Errorf("%s: %d workers: output differs from Run (%d vs %d bytes)", f, w, len(got), len(want))
			}
			if gsum != wsum {
				t.Errorf("%s: %d workers: summary %+v, Run %+v", f, w, gsum, wsum)
			}
		}
		for _, limit := range []int{1, 300, 5000} {
			want, wsum := decodeAll(t, f, 0, limit)
			got, gsum := decodeAll(t, f, 2, limit)
			if got != want {
				t.Errorf("%s: stop after %d records: output differs from Run", f, limit)
			}
			if gsum != wsum {
				t.Errorf("%s: stop after %d records: summary %+v, Run %+v", f, limit, gsum, wsum)
			}
		}
	}
}
