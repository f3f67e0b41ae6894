// Package capture turns packet captures into UDP/IPv4 datagrams.
//
// It reads classic pcap and pcapng files (Reader), or raw link-layer frames
// from a live source (Decoder), strips the link, IPv4 and UDP headers by hand,
// reassembles IPv4 fragments and hands out one Packet per UDP datagram. It is
// built for hostile or damaged input: nothing in a file makes it panic, and
// damage to one record is reported as a *PacketError after which reading
// simply continues. In steady state it does not allocate per packet.
//
// IPv4 header and UDP checksums are verified (unless Options.IgnoreChecksums
// says not to), because the game protocol has none of its own: a datagram
// that fails its checksum is reported as damage and not handed out, since
// corrupted bytes would be taken for data and pollute the state of every
// layer above (reliable delivery, reassembly). A UDP checksum of 0 means the
// sender computed none; a UDP checksum that holds only the pseudo-header sum
// is one the capturing host left to its network card (checksum offload, and
// Linux's loopback interface), so it is not verified either.
//
// Input compressed with gzip or zstd is read as it is, known by its first
// bytes (compressed.go). Besides UDP, the Decoder hands out the TCP segments
// of the GameSpy master server's list port (tcp.go). Two text logs are read
// as captures too: STBC-Dedicated-Server's packet_trace.log (tracelog.go)
// and OpenBC's OBCTRACE test traces (obctrace.go), each turned into frames
// the rest of the pipeline reads like any other.
//
// It also writes captures (Writer), which the synthetic capture generator,
// `decode -w`, `live -w` and the tests use.
package capture

// This file holds the types shared by the reading side: Packet, PacketError,
// Stats, Options and the error classes.

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// LinkType is a pcap/pcapng LINKTYPE_ value. The package does not use
// gopacket's layers.LinkType because in gopacket v1.1.19 that is a uint8 and
// cannot hold LINKTYPE_LINUX_SLL2 (276).
type LinkType uint16

// Link types understood by Decoder (the Writer supports Loopback, Ethernet,
// LinuxSLL and RawIPv4).
const (
	Loopback  LinkType = 0   // LINKTYPE_NULL: 4-byte address family in the capturing host's byte order
	Ethernet  LinkType = 1   // Ethernet II, with any number of 802.1Q/802.1ad tags
	RawDLT12  LinkType = 12  // DLT_RAW as written by some BSDs: raw IPv4 or IPv6
	RawDLT14  LinkType = 14  // DLT_RAW on OpenBSD
	Raw       LinkType = 101 // LINKTYPE_RAW: raw IPv4 or IPv6
	Loop      LinkType = 108 // LINKTYPE_LOOP: like Loopback, always big-endian
	LinuxSLL  LinkType = 113 // Linux "cooked" capture v1
	RawIPv4   LinkType = 228 // LINKTYPE_IPV4
	RawIPv6   LinkType = 229 // LINKTYPE_IPV6
	LinuxSLL2 LinkType = 276 // Linux "cooked" capture v2
)

func (l LinkType) String() string {
	switch l {
	case Loopback:
		return "NULL"
	case Ethernet:
		return "EN10MB"
	case RawDLT12, RawDLT14, Raw:
		return "RAW"
	case Loop:
		return "LOOP"
	case LinuxSLL:
		return "LINUX_SLL"
	case RawIPv4:
		return "IPV4"
	case RawIPv6:
		return "IPV6"
	case LinuxSLL2:
		return "LINUX_SLL2"
	}
	return fmt.Sprintf("LINKTYPE_%d", uint16(l))
}

// Packet is one UDP datagram taken from a capture.
//
// The Packet returned by Reader.Next or Decoder.Decode is owned by the
// Reader/Decoder and is overwritten by the next call; Payload may alias an
// internal buffer (or, for Decoder.Decode, the caller's frame) and is only
// valid until that next call. Copy what you need to keep.
type Packet struct {
	// Frame is the 1-based number of the capture record that carried the
	// datagram. Every record counts, including skipped and damaged ones, so
	// it matches the frame number Wireshark shows. For a reassembled datagram
	// it is the record that completed the reassembly.
	Frame int
	// Interface is the pcapng interface index of the record (0 for pcap).
	Interface int
	// Time is the capture time stamp (of the completing fragment for
	// reassembled datagrams), in UTC.
	Time     time.Time
	Src, Dst netip.AddrPort
	// Payload is the UDP payload.
	Payload []byte
	// Reassembled reports that the datagram was rebuilt from IPv4 fragments.
	Reassembled bool
	// TCP is set when the packet is a TCP segment of the GameSpy master's
	// list port (see decodeTCP) rather than a UDP datagram.
	TCP TCPSegment
}

// PacketError reports damage confined to one record (or one pcapng block).
// It is never fatal: call Next again to continue with the following record.
type PacketError struct {
	// Frame is the 1-based record number of the damaged record, or 0 when the
	// damage is in a pcapng block that does not carry a packet (section
	// header, interface description, unreadable block framing).
	Frame int
	// Offset is the file offset of the record or block, or -1 if unknown
	// (always -1 for frames fed to Decoder.Decode).
	Offset int64
	Err    error
	// Time is the record's own time stamp when its header could be read
	// (the damage is in the frame it holds); zero otherwise.
	Time time.Time
	// Packet is the datagram of a record that failed its UDP checksum
	// (ErrChecksum), so that its addresses, time and bytes can still be
	// shown; nil for any other damage. Like the Packet returned by Next,
	// it is only valid until the next call.
	Packet *Packet
}

func (e *PacketError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("frame %d (file offset %d): %v", e.Frame, e.Offset, e.Err)
	}
	return fmt.Sprintf("frame %d: %v", e.Frame, e.Err)
}

func (e *PacketError) Unwrap() error { return e.Err }

// Classes of damage; every PacketError wraps exactly one of them, so callers
// can tell them apart with errors.Is.
var (
	// ErrTruncated: the file ends in the middle of a record or block.
	ErrTruncated = errors.New("capture: truncated record")
	// ErrBadRecord: a record header or block framing is implausible; the
	// reader skips ahead to the next plausible record.
	ErrBadRecord = errors.New("capture: bad record")
	// ErrLinkHeader: the link-layer header is short or malformed.
	ErrLinkHeader = errors.New("capture: bad link-layer header")
	// ErrIPv4Header: the IPv4 header is short or inconsistent with the data.
	ErrIPv4Header = errors.New("capture: bad IPv4 header")
	// ErrSnapLen: the datagram is incomplete because the capture kept only
	// the first bytes of the frame (its snap length was too small).
	ErrSnapLen = errors.New("capture: packet cut short by the snap length")
	// ErrUDPHeader: the UDP header is short or inconsistent with the data.
	ErrUDPHeader = errors.New("capture: bad UDP header")
	// ErrFragment: an IPv4 fragment contradicts the others of its datagram.
	ErrFragment = errors.New("capture: bad IPv4 fragment")
	// ErrUnknownBlock: a pcapng block of a type the pcapng specification
	// does not define (nor reserve for local use). It is skipped.
	ErrUnknownBlock = errors.New("capture: unknown pcapng block")
	// ErrChecksum: the IPv4 header or UDP checksum does not match the
	// bytes, so they were corrupted on the way or in the file.
	ErrChecksum = errors.New("capture: bad checksum")
)

// Stats counts what a Reader or Decoder has seen so far.
type Stats struct {
	Records     int // capture records (packet blocks), including damaged ones
	UDP         int // UDP datagrams returned, including reassembled ones
	NonIPv4     int // records skipped because they carry no IPv4 (ARP, IPv6, ...)
	NonUDP      int // IPv4 records skipped because they are not UDP (nor master-list TCP)
	TCP         int // TCP segments of the master list port returned
	UnknownLink int // records skipped because their link type is not supported
	Damaged     int // PacketErrors reported
	// BadChecksums counts, of Damaged, the IPv4 headers and UDP datagrams
	// whose checksum did not match.
	BadChecksums int

	FragmentsSeen       int // IPv4 fragments of UDP datagrams fed to reassembly
	Reassembled         int // UDP datagrams rebuilt from fragments
	FragmentsEvicted    int // fragment sets dropped unfinished (caps or timeout)
	FragmentsExpired    int // of FragmentsEvicted, those dropped by the timeout
	FragmentsIncomplete int // fragment sets still unfinished at the end (see Flush)
}

// Options tunes checksum verification and IPv4 reassembly. Zero fields take
// the defaults.
type Options struct {
	// IgnoreChecksums skips the IPv4 header and UDP checksum checks, for
	// captures made on a host whose checksum offload left garbage in the
	// frames it sent.
	IgnoreChecksums bool
	// MaxFragmentSets caps the datagrams being reassembled at once
	// (default 1024); beyond it the oldest set is evicted.
	MaxFragmentSets int
	// MaxFragmentBytes caps the bytes buffered for reassembly (default
	// 4 MiB); beyond it the oldest sets are evicted.
	MaxFragmentBytes int
	// FragmentTimeout drops a set this long (in capture time) after its
	// first fragment (default 30s; negative disables the timeout).
	FragmentTimeout time.Duration
	// TraceServer is the address a packet_trace.log's logging server is
	// shown with (the log does not hold it); default DefaultTraceServer.
	TraceServer netip.AddrPort
	// MaxUnreadable is how many bytes of (uncompressed) input a Reader
	// reads without a readable record before it gives up with an
	// UnreadableError (default DefaultMaxUnreadable; negative: no cap).
	MaxUnreadable int64
	// Interrupt, when closed, makes a Reader end as at the end of the
	// file (within 256 records), so that a command interrupted by SIGINT
	// still finishes what it read; Reader.Interrupted tells the two apart.
	Interrupt <-chan struct{}
}

// Defaults of Options.
const (
	DefaultMaxFragmentSets  = 1024
	DefaultMaxFragmentBytes = 4 << 20
	DefaultFragmentTimeout  = 30 * time.Second
)

func (o Options) withDefaults() Options {
	if o.MaxFragmentSets <= 0 {
		o.MaxFragmentSets = DefaultMaxFragmentSets
	}
	if o.MaxFragmentBytes <= 0 {
		o.MaxFragmentBytes = DefaultMaxFragmentBytes
	}
	if o.FragmentTimeout == 0 {
		o.FragmentTimeout = DefaultFragmentTimeout
	}
	return o
}

// FragmentSetInfo describes an IPv4 datagram whose reassembly was not
// finished, so that tools can report it.
type FragmentSetInfo struct {
	Src, Dst   netip.Addr
	Proto      uint8
	ID         uint16
	FirstFrame int       // record number of the first fragment seen
	FirstTime  time.Time // capture time of the first fragment seen
	Fragments  int       // fragments received
	Bytes      int       // distinct payload bytes received
	TotalLen   int       // full IP payload length, -1 if the last fragment is missing
}
