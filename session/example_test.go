package session_test

import (
	"fmt"
	"log"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
)

// Sessions come out of the Builder as they end; the capture is read once,
// and only the sessions open at a time are in memory.
func ExampleBuilder() {
	rd, err := capture.Open("battle.pcap")
	if err != nil {
		log.Fatal(err)
	}
	defer rd.Close()
	b := session.NewBuilder(session.Options{}, func(s *session.Session) {
		fmt.Printf("%s %q reached %s, ended by %s; %d retransmissions from the server\n",
			s.Client, s.Name, s.Reached, s.EndReason, s.Reliability.ServerToClient.Total().Retransmissions)
	})
	if _, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool { b.Add(r); return true }); err != nil {
		log.Fatal(err)
	}
	b.Finish()
	for _, row := range b.Totals().OpcodeRows() {
		fmt.Printf("%s %-16s %6d %5.1f/min\n", row.Dir, row.Name, row.Count, row.PerMinute)
	}
}
