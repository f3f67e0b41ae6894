package root

// Shell completion of flag values: cobra's completion command completes
// commands and flag names; these complete what the flags take, by flag
// name, in every command that has the flag.

import (
	"fmt"
	"net"
	"strings"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/report/filter"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// fixed completes one of a fixed list of values ("value\tdescription").
func fixed(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

// files completes file names with one of the extensions.
func files(exts ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// captureExts are the names a capture to read has.
var captureExts = []string{"pcap", "pcapng", "cap", "gz", "zst"}

// flagValues are the completions of each flag that takes one of a known
// set of values (or a file of a known kind), by flag name.
func flagValues() map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		"time-format": fixed("r\trelative to the first packet", "a\tabsolute", "ad\tabsolute with date", "d\tdelta", "e\tepoch"),
		"dir":         fixed("c2s\tclient to server", "s2c\tserver to client"),
		"opcode":      opcodeNames,
		"output-format": fixed("fields\tthe -e fields of each message",
			"json\ta JSON array", "text\tone line a message"),
		"field":          fieldNames,
		"fields-option":  fixed("header=y", "header=n", "separator=,", "separator=/t", "separator=/s"),
		"checksums":      fixed("verify\tcheck IPv4 and UDP checksums", "off\tfor offloaded checksums"),
		"mode":           fixed("exact\tbyte for byte", "adaptive\ta protocol-aware client"),
		"timing":         fixed("capture\tthe captured offsets", "asap\tas soon as the answers allow"),
		"fail-on":        fixed("info", "minor", "major", "critical", "config"),
		"show":           fixed("info", "minor", "major", "critical"),
		"log-level":      fixed("debug", "info", "warn", "error"),
		"interface":      interfaceNames,
		"read":           files(captureExts...),
		"write":          files("pcap", "pcapng"),
		"rules":          files("json"),
		"config":         files("toml"),
		"display-filter": fieldNames,
	}
}

func opcodeNames(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for i := range 256 {
		name := game.Opcode(i).String()
		if strings.Contains(name, "(") {
			continue
		}
		// --opcode takes a comma-separated list: complete its last item.
		done := ""
		if i := strings.LastIndexByte(prefix, ','); i >= 0 {
			done = prefix[:i+1]
		}
		out = append(out, fmt.Sprintf("%s%s\t0x%02X", done, name, i))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func fieldNames(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, n := range filter.Names() {
		if n == "fields.PATH" {
			n = "fields."
		}
		out = append(out, n)
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func interfaceNames(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	ifs, _ := net.Interfaces()
	var out []string
	for _, i := range ifs {
		out = append(out, i.Name)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// readsCaptures are the commands whose arguments are captures.
var readsCaptures = map[string]bool{"decode": true, "stats": true, "timeline": true, "report": true, "export": true, "diff": true, "verify": true}

// addCompletions registers the flag-value completions on every command of
// the tree that has the flags.
func addCompletions(c *cobra.Command) {
	values := flagValues()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if fn, ok := values[f.Name]; ok {
				_ = c.RegisterFlagCompletionFunc(f.Name, fn)
			}
		})
		if readsCaptures[c.Name()] && c.Parent() == c.Root() && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = files(captureExts...)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(c)
}
