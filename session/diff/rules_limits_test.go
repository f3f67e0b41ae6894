package diff

import (
	"strings"
	"testing"
)

// A rules file is checked as config files are: nesting, repeated keys, and
// short messages.
func TestParseRulesLimits(t *testing.T) {
	for _, src := range []string{
		`{"latency": "250ms", "latency": "1s"}`,
		`{"ignore": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`,
		`{"ignore": ["` + strings.Repeat("x", 1<<20) + `"], "unknown": 1}`,
	} {
		_, err := ParseRules([]byte(src))
		if err == nil || len(err.Error()) > 400 {
			t.Errorf("%.40s…: %v", src, err)
		}
	}
}
