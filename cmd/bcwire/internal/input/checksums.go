package input

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/spf13/pflag"
)

// Checksums is the --checksums flag of the commands that read captures:
// "verify" (the default) checks every IPv4 header and UDP checksum and
// reports a mismatch as a damaged packet; "off" skips the checks, for
// captures made on a host whose checksum offload left garbage in the frames
// it sent.
type Checksums struct{ off bool }

// AddFlag registers --checksums.
func (c *Checksums) AddFlag(f *pflag.FlagSet) {
	f.Var(c, "checksums", `"verify" IPv4 and UDP checksums and report mismatches as damage, or "off" (for captures whose sending host offloaded checksums)`)
}

func (c *Checksums) String() string {
	if c.off {
		return "off"
	}
	return "verify"
}

// Set parses the flag's value.
func (c *Checksums) Set(s string) error {
	switch s {
	case "verify":
		c.off = false
	case "off":
		c.off = true
	default:
		return fmt.Errorf(`use "verify" or "off"`)
	}
	return nil
}

// Type names the values in --help.
func (c *Checksums) Type() string { return "verify|off" }

// Apply sets the capture options accordingly.
func (c *Checksums) Apply(o capture.Options) capture.Options {
	o.IgnoreChecksums = c.off
	return o
}

// Options are the capture options of a command whose only capture flag is
// --checksums.
func (c *Checksums) Options() capture.Options { return c.Apply(capture.Options{}) }

// ChecksumHint is added to the damage message when packets failed their
// checksum: on a capture made on one of the hosts talking, the frames that
// host sent may carry checksums its network card was to fill in.
func ChecksumHint(bad int) string {
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of them failed their IPv4 or UDP checksum (if the capture was made on a host that leaves checksums to its network card, rerun with --checksums=off)", bad)
}
