// Package report renders what bcwire found for people (text, colored when
// the caller says so, tables, an HTML page) and for programs (JSON). It
// writes to the io.Writer it is given and never asks what that is: whether
// the output is a terminal, and so colored, is the commands' to decide
// (cmd/bcwire/internal/iostreams).
package report
