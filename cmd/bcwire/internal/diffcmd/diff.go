// Package diffcmd implements `bcwire diff`: where our server behaves
// differently from a stock dedicated server on the wire.
package diffcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session/diff"
	"github.com/spf13/cobra"
)

// Options of `bcwire diff`.
type Options struct {
	IO        *iostreams.IOStreams
	Ours      string
	Stock     string
	JSON      bool
	Output    string // HTML page, -o
	Force     bool
	RulesFile string
	FailOn    string
	Show      string
	Ignore    []string
	Compare   []string
	Latency   time.Duration
	RateRatio float64
	Servers   []string
	Quiet     bool
	// LatencySet and RateRatioSet say the flags were given, so that they
	// override a rules file.
	LatencySet, RateRatioSet bool
	Checksums                input.Checksums
}

// NewCmdDiff builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdDiff(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "diff [flags] OURS STOCK",
		Short: "Compare a capture of our server with one of a stock dedicated server",
		Long: `Compare two captures, one of a session against our server (OURS) and one
against the stock dedicated server (STOCK), and list where ours behaves
differently on the wire, grouped by phase (handshake, lobby, gameplay,
disconnect) and most severe first, with both sides' decoded messages and the
frame numbers to look them up with 'bcwire decode'.

Sessions are matched by join order (the first client to connect in OURS with
the first in STOCK, ...). For each pair the join is aligned step by step: the
server's answer to the connect request, to each checksum response, to
NewPlayerInGame and to the disconnect - which messages, in which order, in
which datagrams, with which transport flags - and the fields of those
messages (Settings, checksum requests, MISSION_INIT, DeletePlayerUI, SCORE,
the ships replicated to late joiners, keepalives). Traffic is compared in
aggregate: per-opcode rates (client messages per session-minute, the
server's own messages per 100 client game messages), opcodes only one
server sends, StateUpdates per ship and the flags they carry, relaying of
client messages to the other clients, keepalive cadence, retransmissions.
Protocol rules are checked on each side alone (no 0x80 flag in server
StateUpdates, ACK flags, every reliable message ACKed, sequence numbers,
non-stock framings, replication to late joiners); a finding only ours shows
is a difference, one both show is listed as shared. Named deviations are
findings of their own, each quoting its first instance's frame and bytes:
a disconnect sent as transport type 0x06 (stock 0x05), an event-forward
message longer or shorter than its stock event class (SubsystemStatus 18
bytes), a connect in the legacy [type][len][flags] framing, and every
other form of the dissector's registry of non-stock forms (decode -V names
each with its stock evidence); a server that
keepalives only from some phase on is told apart from one that sends none.
Differences in how a server is set up (Settings values, MISSION_INIT's
match settings) are "config" at info severity.

Values that legitimately differ are tolerated: game time, addresses, player
names, the state of replicated ships, scores, object ids offset by the
owner's slot, reply latency within --latency. Tune them with --ignore and
--compare (field patterns such as "Settings.game_time" or "*.player_name")
or a JSON rules file (--rules):

  {"ignore": ["Settings.map"], "compare": ["*.player_name"],
   "latency": "250ms", "rate_ratio": 2, "alpha": 0.001, "min_count": 5,
   "severity": {"bundling": "minor", "rate": "info"}}

Severities: info < minor < major < critical.

Exit status: 0 when no difference reaches the --fail-on severity, 1 when
some do, 2 for usage or I/O errors.`,
		Example: `  bcwire diff ours.pcap stock.pcap
  bcwire diff --json ours.pcap stock.pcap | jq '.differences[] | select(.severity=="critical")'
  bcwire diff -o diff.html --fail-on major ours.pcapng stock.pcapng
  bcwire diff --ignore 'Settings.map' --latency 250ms ours.pcap stock.pcap
  bcwire diff --rules rules.json --show minor ours.pcap stock.pcap`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return exit.Usage("give two capture files, OURS and STOCK (see --help)")
			}
			o.Ours, o.Stock = args[0], args[1]
			o.LatencySet, o.RateRatioSet = c.Flags().Changed("latency"), c.Flags().Changed("rate-ratio")
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, `print {"differences":[...],"shared_findings":[...],"summary":{...}}`)
	f.StringVarP(&o.Output, "output", "o", "", "also write the comparison as an HTML page to `FILE`")
	f.BoolVar(&o.Force, "force", false, "let -o replace a file that holds a capture")
	output.ReplacedFlag(f, "html", "", "--html is now -o FILE")
	f.StringVar(&o.RulesFile, "rules", "", "read tolerances and thresholds from a JSON rules `FILE`")
	f.StringVar(&o.FailOn, "fail-on", "minor", "exit 1 when a difference of this `SEVERITY` or worse is found (info, minor, major, critical); add \",config\" to count configuration differences too")
	f.StringVar(&o.Show, "show", "info", "list only differences of this `SEVERITY` or worse")
	f.StringSliceVar(&o.Ignore, "ignore", nil, "also tolerate fields matching `PATTERN` (e.g. 'Settings.map', '*.flags')")
	f.StringSliceVar(&o.Compare, "compare", nil, "compare fields the defaults tolerate again (`PATTERN` exactly as listed in the defaults, e.g. '*.player_name')")
	f.DurationVar(&o.Latency, "latency", 100*time.Millisecond, "tolerated difference in reply latency")
	f.Float64Var(&o.RateRatio, "rate-ratio", 1.5, "flag rates whose ratio ours/stock is beyond this or its inverse")
	input.AddServerFlag(f, &o.Servers)
	output.AddQuietFlag(f, &o.Quiet)
	o.Checksums.AddFlag(f)
	return cmd
}

// Run compares the captures and prints the result.
func Run(o *Options) error {
	rules, sv, err := parseFlags(o)
	if err != nil {
		return err
	}
	servers, err := input.ParseServers(o.Servers)
	if err != nil {
		return err
	}
	out := output.Target{Flag: "-o", Path: o.Output, Document: true, Force: o.Force}
	if o.Output != "" {
		if err := out.Check(o.Ours, o.Stock, o.RulesFile); err != nil {
			return err
		}
	}
	ours, err := load(o, o.Ours, servers, &rules)
	if err != nil {
		return err
	}
	stock, err := load(o, o.Stock, servers, &rules)
	if err != nil {
		return err
	}
	if len(ours.Sessions) == 0 || len(stock.Sessions) == 0 {
		empty := o.Ours
		if len(ours.Sessions) > 0 {
			empty = o.Stock
		}
		return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("%s: no Bridge Commander sessions found (is the server on another port? try --server)", empty)}
	}
	res := diff.Compare(ours, stock, &rules)
	failing := res.Count(sv.failOn)
	if sv.failConfig {
		for _, d := range res.Differences {
			if d.Kind == "config" && d.Severity < sv.failOn {
				failing++
			}
		}
	}
	res.Filter(sv.show)
	if err := printDiff(o, res); err != nil {
		return err
	}
	if failing > 0 {
		return &exit.Error{Code: exit.CodeDamaged,
			Err: fmt.Errorf("%d difference(s) of severity %s or worse", failing, sv.failOn)}
	}
	return nil
}

// severities are what --fail-on and --show ask of the differences.
type severities struct {
	failOn     diff.Severity
	failConfig bool // configuration differences count too
	show       diff.Severity
}

// parseFlags reads the rules (--rules, --ignore, --compare, --latency,
// --rate-ratio), --fail-on and --show.
func parseFlags(o *Options) (diff.Rules, severities, error) {
	rules := diff.DefaultRules()
	sv := severities{failOn: diff.Minor}
	if o.RulesFile != "" {
		r, err := diff.LoadRules(o.RulesFile)
		if err != nil {
			return rules, sv, exit.Usage("--rules %s: %v", o.RulesFile, err)
		}
		rules = r
	}
	// --fail-on SEVERITY, optionally with "config" (configuration
	// differences count too): "major,config", or "config" alone (minor).
	for _, f := range strings.Split(o.FailOn, ",") {
		if f = strings.TrimSpace(f); f == "config" {
			sv.failConfig = true
			continue
		}
		sev, err := diff.ParseSeverity(f)
		if err != nil {
			return rules, sv, exit.Usage("--fail-on: %v", err)
		}
		sv.failOn = sev
	}
	var err error
	if sv.show, err = diff.ParseSeverity(o.Show); err != nil {
		return rules, sv, exit.Usage("--show: %v", err)
	}
	rules.Ignore = append(rules.Ignore, o.Ignore...)
	if err := checkCompare(o.Compare, rules.Ignore); err != nil {
		return rules, sv, err
	}
	rules.Strict(o.Compare...)
	if o.LatencySet || o.RulesFile == "" {
		rules.Latency = diff.Duration(o.Latency)
	}
	if o.RateRatioSet || o.RulesFile == "" {
		rules.RateRatio = o.RateRatio
	}
	if err := rules.Check(); err != nil {
		return rules, sv, exit.Usage("%v", err)
	}
	return rules, sv, nil
}

// printDiff prints the differences (text, or --json) and writes -o's page.
func printDiff(o *Options, res *diff.Result) error {
	var err error
	switch {
	case o.Output == "-": // the page is stdout
	case o.JSON:
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	default:
		err = report.WriteDiffText(o.IO.Out, res, o.IO.Color)
	}
	if err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	if o.Output != "" {
		err := output.WriteFile(o.Output, o.IO.Out, func(w io.Writer) error { return report.WriteDiffHTML(w, res, "") })
		if err != nil {
			return exit.IOError(o.Output, err)
		}
	}
	return nil
}

func load(o *Options, path string, servers []netip.AddrPort, rules *diff.Rules) (*diff.Capture, error) {
	return scan.LoadDiff(o.IO, path, servers, rules, o.Quiet, o.Checksums.Options())
}

// checkCompare refuses a --compare pattern that is none of the tolerated
// ones: it would silently compare nothing more.
func checkCompare(compare, ignored []string) error {
	for _, c := range compare {
		if !slices.Contains(ignored, c) {
			return exit.Usage("--compare %q: not one of the tolerated fields; give one exactly as listed: %s", c, strings.Join(ignored, ", "))
		}
	}
	return nil
}
