package input

import (
	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
	"github.com/spf13/pflag"
)

// Caps are the memory caps, the worker count and the checksum mode that the
// reading commands share as flags. Zero values take the defaults of the
// packages (and one worker).
type Caps struct {
	Workers         int
	FragmentSets    int
	FragmentBytes   int
	Flows           int
	Servers         int
	Sessions        int
	IPFragmentSets  int
	IPFragmentBytes int
	Checksums       Checksums

	flags *pflag.FlagSet // to tell a --workers 0 given from the zero value
}

// AddFlags registers the flags; sessions adds --max-sessions (for commands
// that build sessions).
func (c *Caps) AddFlags(f *pflag.FlagSet, sessions bool) {
	c.flags = f
	f.IntVar(&c.Workers, "workers", 1, "decrypt datagrams on N goroutines (the output is the same); useful on large captures")
	f.IntVar(&c.FragmentSets, "max-frag-sets", flow.DefaultMaxFragmentSets, "cap on unfinished fragmented game messages held at once (oldest evicted first)")
	f.IntVar(&c.FragmentBytes, "max-frag-bytes", flow.DefaultMaxFragmentBytes, "cap on the bytes of unfinished fragmented game messages")
	f.IntVar(&c.Flows, "max-flows", flow.DefaultMaxFlows, "cap on client/server flows followed at once (oldest forgotten first)")
	f.IntVar(&c.Servers, "max-servers", flow.DefaultMaxServers, "cap on servers known at once (oldest forgotten first)")
	if sessions {
		f.IntVar(&c.Sessions, "max-sessions", session.DefaultMaxSessions, "cap on sessions open at once (the oldest is ended early)")
	}
	f.IntVar(&c.IPFragmentSets, "max-ip-frag-sets", capture.DefaultMaxFragmentSets, "cap on IPv4 datagrams being reassembled at once")
	f.IntVar(&c.IPFragmentBytes, "max-ip-frag-bytes", capture.DefaultMaxFragmentBytes, "cap on the bytes buffered for IPv4 reassembly")
	c.Checksums.AddFlag(f)
}

// Check rejects nonsensical values.
func (c *Caps) Check() error {
	switch {
	case c.Workers < 0 || c.Workers > 256 || c.Workers == 0 && c.flags != nil && c.flags.Changed("workers"):
		return exit.Usage("--workers %d: use 1 to 256", c.Workers)
	}
	for _, cp := range []struct {
		flag string
		v    int
	}{
		{"--max-frag-sets", c.FragmentSets}, {"--max-frag-bytes", c.FragmentBytes}, {"--max-flows", c.Flows},
		{"--max-servers", c.Servers}, {"--max-sessions", c.Sessions}, {"--max-ip-frag-sets", c.IPFragmentSets},
		{"--max-ip-frag-bytes", c.IPFragmentBytes},
	} {
		if cp.v < 0 {
			return exit.Usage("%s %d: a cap cannot be negative (0 takes the default)", cp.flag, cp.v)
		}
	}
	return nil
}

// Flow, Capture and Session turn the caps into the packages' options.
func (c *Caps) Flow() flow.Options {
	return flow.Options{MaxFragmentSets: c.FragmentSets, MaxFragmentBytes: c.FragmentBytes, MaxFlows: c.Flows, MaxServers: c.Servers}
}

func (c *Caps) Capture() capture.Options {
	return c.Checksums.Apply(capture.Options{MaxFragmentSets: c.IPFragmentSets, MaxFragmentBytes: c.IPFragmentBytes})
}

func (c *Caps) Session(o session.Options) session.Options {
	o.MaxSessions = c.Sessions
	return o
}
