package dissect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRegistryEntries: every form has a unique name, says what it is, how
// it is recognised and its stock evidence, and the evidence it quotes from
// ../shared/vectors/stock-payloads*.json names entries that are there (by
// label; "…" stands for an elided part). PROTOCOL.md quotes are checked
// against that file likewise.
func TestRegistryEntries(t *testing.T) {
	seen := map[string]bool{}
	for i, f := range Forms {
		if int(f.ID) != i || f.Name == "" || f.What == "" || f.Recognised == "" || f.Evidence == "" {
			t.Errorf("entry %d is incomplete: %+v", i, f)
		}
		if seen[f.Name] {
			t.Errorf("name %q twice", f.Name)
		}
		seen[f.Name] = true
		if i != int(FormUnknown) && f.By == "" {
			t.Errorf("%s: no implementation named", f.Name)
		}
	}
	var labels []string
	files, _ := filepath.Glob("../../shared/vectors/stock-payloads*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var entries []struct{ Label string }
		if err := json.Unmarshal(b, &entries); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			labels = append(labels, e.Label)
		}
	}
	protocol, _ := os.ReadFile("../../shared/PROTOCOL.md")
	if len(labels) == 0 || len(protocol) == 0 {
		t.Skip("../shared is not here")
	}
	// Compared without the backticks of the file's code spans.
	flat := strings.Join(strings.Fields(strings.ReplaceAll(string(protocol), "`", "")), " ")
	quoted := regexp.MustCompile(`(stock-payloads(?:-2)?\.json|PROTOCOL\.md) "((?:[^"]|"[^ ,;:)])*)"(?:[ ,;:)]|$)`)
	for _, f := range Forms[1:] {
		ms := quoted.FindAllStringSubmatch(f.Evidence, -1)
		if len(ms) == 0 {
			t.Errorf("%s: evidence quotes neither the vectors nor PROTOCOL.md: %s", f.Name, f.Evidence)
		}
		for _, m := range ms {
			parts := strings.Split(m[2], "…")
			if m[1] == "PROTOCOL.md" {
				for _, p := range parts {
					if p = strings.TrimSpace(strings.ReplaceAll(p, "`", "")); p != "" && !strings.Contains(flat, p) {
						t.Errorf("%s: PROTOCOL.md has no %q", f.Name, p)
					}
				}
				continue
			}
			found := false
			for _, l := range labels {
				ok := true
				for _, p := range parts {
					ok = ok && strings.Contains(l, strings.TrimSpace(p))
				}
				found = found || ok
			}
			if !found {
				t.Errorf("%s: no vector labelled %q", f.Name, m[2])
			}
		}
	}
}

// TestNonStockStringAllocatesOnce: String is AppendText's text, built on
// the stack and copied once into the string, for every form, with and
// without a length departure, and for the unknown form with its bytes.
func TestNonStockStringAllocatesOnce(t *testing.T) {
	var marks []NonStock
	for f := range FormID(NumForms) {
		marks = append(marks,
			NonStock{Form: f, Len: 10, Stock: "class, code"},
			NonStock{Form: f, Len: 10, StockLen: 18, Stock: "class, code, source object"},
			NonStock{Form: f, Offset: 9, Stock: "source object", Rest: []byte{1, 0, 0xB0}})
	}
	for _, n := range marks {
		if got, want := n.String(), string(n.AppendText(nil)); got != want {
			t.Fatalf("%+v: String %q, AppendText %q", n, got, want)
		}
		if a := testing.AllocsPerRun(10, func() { _ = n.String() }); a > 1 {
			t.Errorf("%+v: String made %v allocations, want 1", n, a)
		}
	}
}
