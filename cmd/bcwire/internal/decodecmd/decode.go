// Package decodecmd implements `bcwire decode`: print every transport
// message of one or more captures (or one pasted datagram), decoded.
package decodecmd

import (
	"net/netip"
	"runtime"
	"strconv"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/spf13/cobra"
)

// Options of `bcwire decode`.
type Options struct {
	FailOn  exit.FailOn // --fail-on nonstock
	IO      *iostreams.IOStreams
	Files   []string
	Hex     string // decode this one datagram instead of files
	Plain   bool   // Hex is already decrypted
	Verbose bool
	JSON    bool
	Opcodes []string // names or numbers
	Dir     string
	Peer    int // -1 = any
	Servers []string
	Count   int // 0 = all
	// Quiet (-q) prints no packet lines, as tshark's -q, and no summary;
	// damage and errors still go to stderr, and -w still writes.
	Quiet bool
	// LineBuffered (-l) flushes the output after each packet, as tshark's
	// -l; reading a pipe does so too.
	LineBuffered bool
	Caps         input.Caps
	// tshark's: -r, -Y, -t; -T fields -e -E, -x; -w.
	Read  input.ReadFlags
	Print PrintFlags
	Write string
	Force bool // -w may replace an existing file
}

// NewCmdDecode builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdDecode(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io, Peer: -1}
	cmd := &cobra.Command{
		Use:   "decode [flags] FILE...",
		Short: "Print every message in a capture, decoded",
		Long: `Read pcap or pcapng captures, follow each Bridge Commander flow, decrypt
every datagram and print one line per transport message: frame number,
time since the first packet, addresses, direction, peer id, the message's
place in its datagram, transport type, reliability and sequence number,
and - when the message completes a game message - the opcode's name and
its fields. Fragments are reassembled; the line of the last fragment
carries the game message. GameSpy queries and replies are decoded too.

Nothing is dropped silently: a message that cannot be decoded is shown raw
with the reason, and decoding goes on.

Exit status: 0 when nothing was damaged (non-stock messages, intact but not
in stock's form, are reported and exit 0 unless --fail-on nonstock), 1 when
some packets or messages were damaged (the damage is in the output), 2 for usage or I/O
errors.`,
		Example: `  bcwire decode testdata/pcaps/battle.pcap
  bcwire decode -V --opcode StateUpdate -c 100 capture.pcapng
  bcwire decode --json capture.pcap | jq 'select(.name == "CHAT")'
  bcwire decode --dir s2c --server 10.0.0.1:22101 capture.pcap
  bcwire decode --dir 'C->S' --opcode CHAT capture.pcap
  bcwire decode --hex "01 02 03 06 C0 00 00 02 32 1B 80 ..." --plain
  bcwire decode --hex "FF D7 33 66 4C 5F 96 67 DF 00"
  bcwire decode -Y 'name == "CHAT" and fields.text contains "gg"' -r capture.pcap.gz
  bcwire decode -Y 'fields.speed > 5' -T fields -E header=y -e frame -e time -e fields.speed capture.pcap
  bcwire decode -x -t ad -Y 'opcode in [0x2C, 0x2D]' a.pcap b.pcapng
  bcwire decode -Y 'src contains "10.0.1.10" or dst contains "10.0.1.10"' -w player.pcapng capture.pcap`,
		RunE: func(c *cobra.Command, args []string) error {
			files, err := o.Read.Inputs(args)
			if err != nil {
				return err
			}
			o.Files = files
			if o.Hex == "" && len(o.Files) == 0 {
				return exit.Usage("give one or more capture files, or --hex HEX (see --help)")
			}
			if o.Hex != "" && len(o.Files) > 0 {
				return exit.Usage("--hex decodes one datagram; do not also give files")
			}
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Verbose, "verbose", "V", false, "print every field of each message")
	f.BoolVar(&o.JSON, "json", false, "print NDJSON: one object per transport message")
	f.StringVar(&o.Hex, "hex", "", "decode one datagram given as hex (as captured, i.e. encrypted, unless --plain)")
	f.BoolVar(&o.Plain, "plain", false, "with --hex: the hex is already decrypted")
	f.StringSliceVar(&o.Opcodes, "opcode", nil, "only game messages with these opcodes (names like StateUpdate or CHAT, or numbers like 0x1C); repeatable")
	f.StringVar(&o.Dir, "dir", "", "only one direction: c2s (client to server) or s2c; 'C->S' and 'S->C' (quoted) too")
	f.IntVar(&o.Peer, "peer", -1, "only datagrams with this peer id (1 = server, 2 = first client, 255 = connecting)")
	input.AddServerFlag(f, &o.Servers)
	f.IntVarP(&o.Count, "count", "c", 0, "read only the first `N` packets (of all the files together)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print no packet lines (as tshark's -q) and no summary; damage and errors still go to stderr, -w still writes")
	f.BoolVarP(&o.LineBuffered, "line-buffered", "l", false, "flush the output after each packet (as tshark's -l); done anyway when reading a pipe")
	exit.AddFailOnFlag(f, &o.FailOn)
	o.Caps.AddFlags(f, false)
	// With a second core, reading and decryption run beside
	// the decoding goroutine (RunParallel), and the formatting of the
	// lines on as many goroutines again (DecodePrinter.SetWorkers), so
	// decode uses both by default. The output is the same.
	o.Caps.Workers = DefaultWorkers()
	f.Lookup("workers").DefValue = strconv.Itoa(o.Caps.Workers)
	f.Lookup("workers").Usage = "decrypt datagrams, and format the lines, on N goroutines each (the output is the same)"
	input.AddReadFlags(f, &o.Read, true)
	AddPrintFlags(f, &o.Print)
	f.StringVarP(&o.Write, "write", "w", "", "write the frames of the messages kept to `FILE` as they were captured, instead of printing (pcapng if FILE ends in .pcapng, else pcap; - writes pcap to standard output)")
	output.AddForceFlag(f, &o.Force)
	return cmd
}

// DefaultWorkers is decode's --workers when not given: 2 where there are
// two cores or more, else 1.
func DefaultWorkers() int { return min(2, runtime.NumCPU()) }

type filter struct {
	opcodes map[game.Opcode]bool
	dir     game.Direction
	peer    int
	servers map[netip.AddrPort]bool
}

func (f *filter) keep(r *flow.Record) bool {
	if f.dir != game.DirUnknown && r.Dir != f.dir {
		return false
	}
	if f.peer >= 0 && (r.Kind == flow.KindGameSpy || int(r.Peer) != f.peer) {
		return false
	}
	if len(f.servers) > 0 && !f.servers[r.Server] {
		return false
	}
	if len(f.opcodes) > 0 && (r.Game == nil || !f.opcodes[r.Game.Msg.Opcode()]) {
		return false
	}
	return true
}

func parseFilter(o *Options) (*filter, []netip.AddrPort, error) {
	f := &filter{peer: o.Peer}
	switch strings.ToUpper(strings.ReplaceAll(o.Dir, " ", "")) {
	case "":
	case "C->S", "C2S", "CS", "CLIENT":
		f.dir = game.ClientToServer
	case "S->C", "S2C", "SC", "SERVER":
		f.dir = game.ServerToClient
	default:
		return nil, nil, exit.Usage("--dir %q: use c2s or s2c (or 'C->S', 'S->C' in quotes)", o.Dir)
	}
	if o.Peer > 255 || o.Peer < -1 {
		return nil, nil, exit.Usage("--peer %d: peer ids are 0-255", o.Peer)
	}
	if len(o.Opcodes) > 0 {
		f.opcodes = map[game.Opcode]bool{}
		for _, s := range o.Opcodes {
			op, ok := game.ParseOpcode(s)
			if !ok {
				return nil, nil, exit.Usage("--opcode %q: not an opcode name or number (e.g. StateUpdate, CHAT, 0x1C)", s)
			}
			f.opcodes[op] = true
		}
	}
	servers, err := input.ParseServers(o.Servers)
	if err != nil {
		return nil, nil, err
	}
	for _, ap := range servers {
		if f.servers == nil {
			f.servers = map[netip.AddrPort]bool{}
		}
		f.servers[ap] = true
	}
	return f, servers, nil
}
