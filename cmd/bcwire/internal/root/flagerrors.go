package root

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError turns pflag's parse errors into messages a person can act on:
// `-c abc` says a whole number is wanted instead of quoting strconv.
func flagError(c *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return exit.Usage("%v", err)
	}
	fl := ive.GetFlag()
	name := "--" + fl.Name
	if fl.Shorthand != "" {
		name = "-" + fl.Shorthand
	}
	return exit.Usage("%s %s: %s", name, quoteArg(ive.GetValue()), wantFor(fl, ive.Unwrap()))
}

// wantFor says what a flag of fl's type takes; for the flags of bcwire's
// own types, their own message (cause) says it.
func wantFor(fl *pflag.Flag, cause error) string {
	switch t := fl.Value.Type(); t {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "count":
		return "give a whole number"
	case "float32", "float64":
		return "give a number"
	case "duration":
		return "give a duration such as 500ms, 30s, 5m or 1h"
	case "bool":
		return "give true or false (or the flag alone)"
	default:
		if cause != nil {
			return cause.Error()
		}
		return fmt.Sprintf("not a valid %s", t)
	}
}

// quoteArg shows an argument as typed, quoted only when it needs to be.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"'\\") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
