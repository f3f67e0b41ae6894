package root

import (
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/spf13/cobra"
)

// profiling holds the hidden --cpuprofile and --memprofile flags, for
// measuring bcwire itself (see README, Performance): the profiles are
// written whether the command succeeds or not.
type profiling struct {
	cpuPath, memPath string
	cpuFile          *output.AtomicFile
}

func (p *profiling) addFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&p.cpuPath, "cpuprofile", "", "write a CPU profile to `FILE` (go tool pprof)")
	f.StringVar(&p.memPath, "memprofile", "", "write an allocation profile to `FILE` at exit (go tool pprof -sample_index=alloc_space)")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
}

func (p *profiling) start() error {
	if p.memPath != "" {
		runtime.MemProfileRate = 4096
	}
	if p.cpuPath == "" {
		return nil
	}
	f, err := output.CreateKept(p.cpuPath) // finished after the command, which may stop on a signal
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return err
	}
	p.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the allocation profile.
func (p *profiling) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		f := p.cpuFile
		p.cpuFile = nil
		if err := f.Commit(); err != nil {
			return err
		}
	}
	if p.memPath == "" {
		return nil
	}
	err := output.WriteFile(p.memPath, nil, func(w io.Writer) error { return pprof.Lookup("allocs").WriteTo(w, 0) })
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return nil
}
