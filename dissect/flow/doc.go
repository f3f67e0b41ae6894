// Package flow follows Bridge Commander traffic through a capture: it groups
// UDP datagrams into client/server flows, works out which endpoint is the
// server, decrypts each datagram, splits it into transport messages,
// reassembles fragmented game messages and decodes them. It emits one Record
// per transport message (or per GameSpy datagram, or per datagram that could
// not be split), in capture order, reusing a few Record values (one per
// datagram Run reads ahead) so that steady state allocates nothing.
//
// Where things are: record.go (the Record), options.go (Options, Stats),
// tracker.go (the Tracker, one datagram at a time), discovery.go (servers,
// flows and the pair cache), file.go and parallel.go (Run and RunParallel,
// which feed it a capture), master.go (the GameSpy master's TCP list).
package flow
