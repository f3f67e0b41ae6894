package cliutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestReadFlags(t *testing.T) {
	var r ReadFlags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	AddReadFlags(fs, &r, true)
	if err := fs.Parse([]string{"-r", "a.pcap", "-r", "-", "-Y", `name == "CHAT"`, "-t", "ad", "b.pcap"}); err != nil {
		t.Fatal(err)
	}
	files, err := r.Inputs(fs.Args())
	if err != nil || strings.Join(files, " ") != "b.pcap a.pcap -" {
		t.Errorf("Inputs = %v, %v", files, err)
	}
	if f, err := r.CompileFilter(); f == nil || err != nil {
		t.Errorf("CompileFilter = %v, %v", f, err)
	}
	if _, err := r.TimeFormat(); err != nil {
		t.Error(err)
	}
	r.Reads = []string{"-", "-"}
	if _, err := r.Inputs(nil); err == nil {
		t.Error("stdin twice accepted")
	}
	r.Time = "x"
	if _, err := r.TimeFormat(); !isUsage(err) {
		t.Errorf("-t x: %v", err)
	}
	r.Filter = `name == "CHAT" and`
	_, err = r.CompileFilter()
	if !isUsage(err) || !strings.Contains(err.Error(), "column 19") || !strings.Contains(err.Error(), "-Y") {
		t.Errorf("bad -Y: %v", err)
	}
}

func TestPrintFlags(t *testing.T) {
	for _, tc := range []struct {
		p      PrintFlags
		fields bool
		bad    string
	}{
		{PrintFlags{}, false, ""},
		{PrintFlags{Format: "fields", Fields: []string{"frame", "fields.text"}, Options: []string{"header=y", "separator=,"}}, true, ""},
		{PrintFlags{Format: "fields"}, false, "at least one -e"},
		{PrintFlags{Format: "pdml"}, false, "-T \"pdml\""},
		{PrintFlags{Fields: []string{"frame"}}, false, "need -T fields"},
		{PrintFlags{Format: "fields", Fields: []string{"fram"}}, false, "unknown field"},
		{PrintFlags{Format: "fields", Fields: []string{"frame"}, Options: []string{"quote=d"}}, false, "header and separator"},
	} {
		o, fields, err := tc.p.FieldsOptions()
		if tc.bad != "" {
			if !isUsage(err) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%+v: err %v, want a usage error with %q", tc.p, err, tc.bad)
			}
			continue
		}
		if err != nil || fields != tc.fields {
			t.Errorf("%+v: fields %v, err %v", tc.p, fields, err)
		}
		if fields && (!o.Header || o.Separator != ",") {
			t.Errorf("-E not applied: %+v", o)
		}
	}
}

func isUsage(err error) bool {
	var e *ExitError
	return errors.As(err, &e) && e.Code == ExitUsage
}
