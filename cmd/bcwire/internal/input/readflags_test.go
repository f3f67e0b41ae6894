package input

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
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

func isUsage(err error) bool {
	var e *exit.Error
	return errors.As(err, &e) && e.Code == exit.CodeUsage
}
