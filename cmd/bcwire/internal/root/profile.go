package root

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiling holds the hidden --cpuprofile and --memprofile flags, for
// measuring bcwire itself (see README, Performance): the profiles are
// written whether the command succeeds or not.
type profiling struct {
	cpuPath, memPath string
	cpuFile          *os.File
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
	f, err := os.Create(p.cpuPath)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	p.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the allocation profile.
func (p *profiling) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return err
		}
		p.cpuFile = nil
	}
	if p.memPath == "" {
		return nil
	}
	f, err := os.Create(p.memPath)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}
