// Package ciphercmd implements `bcwire cipher encrypt|decrypt HEX`.
package ciphercmd

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect"
	"github.com/spf13/cobra"
)

// Options for the cipher commands.
type Options struct {
	IO      *iostreams.IOStreams
	Encrypt bool
	Hex     string
}

// NewCmdCipher builds `bcwire cipher`. runF, when set, is called with the
// parsed options instead of running the command.
func NewCmdCipher(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cipher",
		Short: "Encrypt or decrypt one datagram with the AlbyRules cipher",
		Long: `Encrypt or decrypt one whole datagram with the AlbyRules cipher and print
the other form as hex. Byte 0 (the peer id) is sent in clear and is copied
unchanged; the cipher state starts fresh for every datagram.

Hex may contain spaces, colons, dashes and 0x prefixes, as pasted from logs.`,
	}
	for _, enc := range []bool{true, false} {
		enc := enc
		name, what := "decrypt", "plaintext"
		if enc {
			name, what = "encrypt", "ciphertext"
		}
		cmd.AddCommand(&cobra.Command{
			Use:     name + " HEX...",
			Short:   "Print the " + what + " of a datagram",
			Example: "  bcwire cipher " + name + " 01 00 00 00 00 00",
			Args:    cobra.MinimumNArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				o := &Options{IO: io, Encrypt: enc, Hex: strings.Join(args, " ")}
				if runF != nil {
					return runF(o)
				}
				return Run(o)
			},
		})
	}
	return cmd
}

// Run converts one datagram.
func Run(o *Options) error {
	b, err := input.ParseHex(o.Hex)
	if err != nil {
		return exit.Usage("bad hex: %v", err)
	}
	if o.Encrypt {
		dissect.Encrypt(b, b)
	} else {
		dissect.Decrypt(b, b)
	}
	_, err = fmt.Fprintf(o.IO.Out, "%X\n", b)
	return err
}
