package root

// bcwire man DIR: a man page per command, written from the same text as
// --help (so the two cannot drift), in the man(7) macros every man reader
// knows.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newCmdMan() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for every command into DIR",
		Long: `Write bcwire.1 and bcwire-COMMAND.1 (bcwire-decode.1, ...) into DIR, which
is created if needed. Read one with man -l DIR/bcwire-decode.1, or install
them where man looks:

  bcwire man ~/.local/share/man/man1 && man bcwire-decode`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exit.Usage("give the directory to write the man pages to")
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return exit.IOError(dir, err)
			}
			return writeManPages(c.Root(), dir)
		},
	}
}

func writeManPages(c *cobra.Command, dir string) error {
	if c.Hidden || !c.IsAvailableCommand() && c.HasParent() {
		return nil
	}
	name := strings.ReplaceAll(c.CommandPath(), " ", "-")
	path := filepath.Join(dir, name+".1")
	err := output.WriteFile(path, nil, func(w io.Writer) error {
		_, err := w.Write([]byte(manPage(c)))
		return err
	})
	if err != nil {
		return exit.IOError(path, err)
	}
	for _, sub := range c.Commands() {
		if err := writeManPages(sub, dir); err != nil {
			return err
		}
	}
	return nil
}

// manPage is c's page in man(7) macros.
func manPage(c *cobra.Command) string {
	var b strings.Builder
	name := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"bcwire\" \"bcwire manual\"\n", strings.ToUpper(roff(name)))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(name), roff(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roff(c.UseLine()))
	b.WriteString(".SH DESCRIPTION\n")
	long := c.Long
	if long == "" {
		long = c.Short
	}
	b.WriteString(paragraphs(long))
	if c.HasAvailableLocalFlags() || c.HasAvailableInheritedFlags() {
		b.WriteString(".SH OPTIONS\n")
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) { manFlag(&b, f) })
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { manFlag(&b, f) })
	}
	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n.nf\n.RS\n")
		for _, l := range strings.Split(strings.TrimRight(c.Example, "\n"), "\n") {
			b.WriteString(roffLine(strings.TrimPrefix(l, "  ")) + "\n")
		}
		b.WriteString(".RE\n.fi\n")
	}
	var see []string
	if c.HasParent() {
		see = append(see, strings.ReplaceAll(c.Parent().CommandPath(), " ", "-")+"(1)")
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			see = append(see, strings.ReplaceAll(sub.CommandPath(), " ", "-")+"(1)")
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", roff(strings.Join(see, ", ")))
	}
	return b.String()
}

func manFlag(b *strings.Builder, f *pflag.Flag) {
	if f.Hidden {
		return
	}
	varname, usage := pflag.UnquoteUsage(f)
	head := "\\-\\-" + roff(f.Name)
	if f.Shorthand != "" {
		head = "\\-" + roff(f.Shorthand) + ", " + head
	}
	if varname != "" {
		head += " " + roff(varname)
	}
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	fmt.Fprintf(b, ".TP\n.B %s\n%s\n", head, roffLine(usage))
}

// paragraphs sets text: blank lines part paragraphs, indented lines are
// kept as they are (lists, examples).
func paragraphs(text string) string {
	var b strings.Builder
	inNf := false
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			if inNf {
				b.WriteString(".fi\n")
				inNf = false
			}
			b.WriteString(".PP\n")
		case strings.HasPrefix(l, " "):
			if !inNf {
				b.WriteString(".nf\n")
				inNf = true
			}
			b.WriteString(roffLine(l) + "\n")
		default:
			if inNf {
				b.WriteString(".fi\n")
				inNf = false
			}
			b.WriteString(roffLine(l) + "\n")
		}
	}
	if inNf {
		b.WriteString(".fi\n")
	}
	return b.String()
}

// roff escapes text for a man page: backslashes, and hyphens, which roff
// would otherwise set as typographic hyphens.
func roff(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffLine escapes a line, guarding a leading dot or quote (a request).
func roffLine(s string) string {
	s = roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
