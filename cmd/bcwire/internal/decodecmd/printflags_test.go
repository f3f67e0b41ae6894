package decodecmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
)

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
	var e *exit.Error
	return errors.As(err, &e) && e.Code == exit.CodeUsage
}
