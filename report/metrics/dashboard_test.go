package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// exported maps each metric family bcwire exports to its label names,
// read from the collectors' own descriptions (what a scrape can hold).
func exported(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	NewDissector().Describe(ch)
	(&Server{}).Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	vl := regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
	out := map[string]map[string]bool{}
	for d := range ch {
		s := d.String()
		m := fq.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("cannot read a description: %s", s)
		}
		labels := map[string]bool{}
		if l := vl.FindStringSubmatch(s); l != nil && l[1] != "" {
			for _, name := range strings.Split(l[1], ",") {
				labels[strings.TrimSpace(name)] = true
			}
		}
		out[m[1]] = labels
	}
	if len(out) < 20 {
		t.Fatalf("only %d metric families described", len(out))
	}
	return out
}

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = map[string]bool{"instance": true, "job": true}

// promqlWords are the PromQL functions and keywords the dashboard uses;
// any other identifier in an expression must be a metric.
var promqlWords = map[string]bool{
	"sum": true, "rate": true, "increase": true, "histogram_quantile": true, "topk": true,
	"by": true, "without": true, "and": true, "or": true, "unless": true,
}

type dashboard struct {
	Title  string
	Panels []struct {
		Title   string
		Targets []struct{ Expr string }
	}
	Templating struct {
		List []struct {
			Name  string
			Query json.RawMessage
		}
	}
}

var (
	reRange    = regexp.MustCompile(`\[[^\]]*\]`)
	reString   = regexp.MustCompile(`"[^"]*"`)
	reSelector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}`)
	reMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	reGrouping = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	reIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// label_values(METRIC, LABEL): a Grafana template query.
	reLabelValues = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)`)
)

// checkExpr reports every metric an expression names that bcwire does not
// export, and every label it selects or groups by that the metric lacks.
func checkExpr(expr string, metrics map[string]map[string]bool, builtin map[string]bool) []string {
	var problems []string
	// A histogram's series are NAME_bucket (with le), NAME_sum, NAME_count.
	family := func(name string) (map[string]bool, bool) {
		if l, ok := metrics[name]; ok {
			return l, true
		}
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if l, ok := metrics[strings.TrimSuffix(name, suf)]; ok && strings.HasSuffix(name, suf) {
				if suf == "_bucket" {
					l = mergeLabels(l, map[string]bool{"le": true})
				}
				return l, true
			}
		}
		return nil, builtin[name]
	}
	hasLabel := func(name, label string) bool {
		labels, _ := family(name)
		return labels[label] || targetLabels[label] || builtin[name]
	}
	e := reRange.ReplaceAllString(expr, "")
	// Grafana's label_values(METRIC, LABEL) in a template variable.
	for _, m := range reLabelValues.FindAllStringSubmatch(e, -1) {
		if !hasLabel(m[1], m[2]) {
			problems = append(problems, m[1]+" has no label "+m[2])
		}
	}
	e = reLabelValues.ReplaceAllString(e, " $1 ")
	for _, m := range reSelector.FindAllStringSubmatch(e, -1) {
		for _, mm := range reMatcher.FindAllStringSubmatch(m[2], -1) {
			if _, ok := family(m[1]); ok && !hasLabel(m[1], mm[1]) {
				problems = append(problems, m[1]+" has no label "+mm[1])
			}
		}
	}
	e = reSelector.ReplaceAllString(e, " $1 ")
	var grouping []string
	for _, g := range reGrouping.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(g[1], ",") {
			grouping = append(grouping, strings.TrimSpace(l))
		}
	}
	e = reGrouping.ReplaceAllString(e, " ")
	e = reString.ReplaceAllString(e, " ")
	// What is left is functions, keywords, numbers and metric names.
	for _, id := range reIdent.FindAllString(e, -1) {
		if promqlWords[id] {
			continue
		}
		if _, ok := family(id); !ok {
			problems = append(problems, "metric "+id+" is not exported by bcwire")
			continue
		}
		for _, l := range grouping {
			if !hasLabel(id, l) {
				problems = append(problems, "grouping by "+l+", which "+id+" does not have")
			}
		}
	}
	return problems
}

func mergeLabels(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestDashboardNamesExportedMetrics reads the Grafana dashboard shipped in
// dashboard/bcwire.json and checks every PromQL expression in it against
// the metrics this package exports: a renamed metric or label fails here,
// not on somebody's wall.
func TestDashboardNamesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("dashboard/bcwire.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard/bcwire.json: %v", err)
	}
	metrics := exported(t)
	// up is Prometheus's own series for every target.
	builtin := map[string]bool{"up": true}
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		var q struct{ Query string }
		if len(v.Query) > 0 && v.Query[0] == '{' && json.Unmarshal(v.Query, &q) == nil && q.Query != "" {
			exprs = append(exprs, q.Query)
		}
	}
	used := map[string]bool{}
	for _, e := range exprs {
		for _, p := range checkExpr(e, metrics, builtin) {
			t.Errorf("%s: %s", e, p)
		}
		for _, id := range reIdent.FindAllString(e, -1) {
			used[strings.TrimSuffix(id, "_bucket")] = true
		}
	}
	// What the dashboard is for: each of these must be on it.
	for _, want := range []string{"bcwire_players", "bcwire_sessions_open", "bcwire_messages_total",
		"bcwire_datagrams_total", "bcwire_retransmissions_total", "bcwire_ack_rtt_seconds",
		"bcwire_server_dropped_datagrams_total"} {
		if !used[want] {
			t.Errorf("the dashboard shows no %s", want)
		}
	}
	if len(exprs) < 10 {
		t.Errorf("only %d expressions read: the file's shape changed?", len(exprs))
	}
}

// TestCheckExprFindsMistakes shows the check above can fail: a misspelt
// metric, a label a metric lacks, and a grouping by such a label.
func TestCheckExprFindsMistakes(t *testing.T) {
	metrics := exported(t)
	builtin := map[string]bool{"up": true}
	for expr, want := range map[string]string{
		`rate(bcwire_datagram_total[5m])`:                                    "not exported",
		`sum(rate(bcwire_datagrams_total{opcode="0x1c"}[1m]))`:               "has no label opcode",
		`sum by (reason) (rate(bcwire_messages_total[1m]))`:                  "grouping by reason",
		`histogram_quantile(0.9, sum by (le) (rate(bcwire_rtt_bucket[1m])))`: "not exported",
		`bcwire_players + bcwire_player`:                                     "bcwire_player is not exported",
	} {
		got := strings.Join(checkExpr(expr, metrics, builtin), "; ")
		if !strings.Contains(got, want) {
			t.Errorf("%s: problems %q, want one with %q", expr, got, want)
		}
	}
	good := []string{
		`histogram_quantile(0.9, sum by (le) (rate(bcwire_ack_rtt_seconds_bucket{instance=~"$instance"}[5m])))`,
		`sum by (dir, name) (rate(bcwire_messages_total{instance=~"$instance"}[1m]))`,
		`label_values(up, instance)`,
	}
	for _, e := range good {
		if p := checkExpr(e, metrics, builtin); len(p) > 0 {
			sort.Strings(p)
			t.Errorf("%s: unexpected problems %v", e, p)
		}
	}
}
