//go:build linux

package live

import (
	"encoding/binary"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/google/gopacket"
	"golang.org/x/sys/unix"
)

// ring is a TPACKET_V3 receive ring: the kernel writes frames into blocks
// of memory shared with the process and hands a block over when it is full
// or its timeout passed, so that a capture wakes up once per block instead
// of twice per packet (poll and recvmsg), and copies nothing out.
//
// The memory is laid out as the kernel's <linux/if_packet.h> says: each
// block starts with a struct tpacket_block_desc (its status, packet count
// and first packet's offset), each packet with a struct tpacket3_hdr
// followed by a struct sockaddr_ll.
type ring struct {
	mem       []byte
	blockSize int
	blocks    int

	cur  int  // the block being read (or waited for)
	held bool // the process owns block cur
	left int  // packets of block cur not yet returned
	off  int  // offset in block cur of the next packet
	// taken counts the frames taken out of the ring, returned or skipped:
	// each is one the kernel counted as passed (see Handle.Cut).
	taken uint64
}

// Offsets in struct tpacket_block_desc (version, offset_to_priv, then
// struct tpacket_hdr_v1) and struct tpacket3_hdr.
const (
	blkStatus     = 8
	blkNumPkts    = 12
	blkFirstPkt   = 16
	pktNextOffset = 0
	pktSec        = 4
	pktNsec       = 8
	pktSnaplen    = 12
	pktLen        = 16
	pktMac        = 24
	pktSockaddr   = 48 // TPACKET_ALIGN(sizeof(struct tpacket3_hdr))
	sllPkttype    = 10 // in struct sockaddr_ll
)

// ringBlockSize is the size of one block: a power of two that holds the
// largest frame the snap length keeps (262144 bytes) with its headers.
const ringBlockSize = 1 << 20

// setupRing switches fd to TPACKET_V3 and maps a ring of about bufSize
// bytes whose blocks the kernel hands over after at most timeout. It must
// run before bind. An error means the kernel cannot: the caller falls back
// to recvmsg.
func setupRing(fd, bufSize int, timeout time.Duration) (*ring, error) {
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return nil, err
	}
	blocks := max(bufSize/ringBlockSize, 2)
	const frameSize = 1 << 11 // V3 packs frames of any size; the kernel only checks the arithmetic
	req := unix.TpacketReq3{
		Block_size:     ringBlockSize,
		Block_nr:       uint32(blocks),
		Frame_size:     frameSize,
		Frame_nr:       uint32(blocks * ringBlockSize / frameSize),
		Retire_blk_tov: uint32(max(timeout/time.Millisecond, 1)),
	}
	if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(fd, 0, blocks*ringBlockSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &ring{mem: mem, blockSize: ringBlockSize, blocks: blocks}, nil
}

// status is the kernel-shared status word of block i.
func (r *ring) status(i int) *uint32 {
	return (*uint32)(unsafe.Pointer(&r.mem[i*r.blockSize+blkStatus]))
}

// next returns the next frame of the blocks the process holds, releasing
// each block to the kernel once every frame of it was returned (at the
// call after its last frame, so that frame stays valid until then). ok is
// false when no block is ready: the caller polls.
func (r *ring) next(ifindex int, loopback bool) (frame []byte, ci gopacket.CaptureInfo, ok bool) {
	for {
		if r.held && r.left == 0 {
			atomic.StoreUint32(r.status(r.cur), unix.TP_STATUS_KERNEL)
			r.held = false
			r.cur = (r.cur + 1) % r.blocks
		}
		if !r.held {
			if atomic.LoadUint32(r.status(r.cur))&unix.TP_STATUS_USER == 0 {
				return nil, ci, false
			}
			b := r.mem[r.cur*r.blockSize:]
			r.held = true
			r.left = int(binary.LittleEndian.Uint32(b[blkNumPkts:]))
			r.off = int(binary.LittleEndian.Uint32(b[blkFirstPkt:]))
			continue
		}
		block := r.mem[r.cur*r.blockSize : (r.cur+1)*r.blockSize]
		h := block[r.off:]
		next := int(binary.LittleEndian.Uint32(h[pktNextOffset:]))
		snap := int(binary.LittleEndian.Uint32(h[pktSnaplen:]))
		mac := int(binary.LittleEndian.Uint16(h[pktMac:]))
		ci = gopacket.CaptureInfo{
			Timestamp: time.Unix(int64(binary.LittleEndian.Uint32(h[pktSec:])),
				int64(binary.LittleEndian.Uint32(h[pktNsec:]))).UTC(),
			CaptureLength:  snap,
			Length:         int(binary.LittleEndian.Uint32(h[pktLen:])),
			InterfaceIndex: ifindex,
		}
		outgoing := h[pktSockaddr+sllPkttype] == unix.PACKET_OUTGOING
		start := r.off + mac
		r.left--
		r.off += next
		r.taken++
		if start+snap > len(block) || (loopback && outgoing) {
			continue // the kernel filter drops outgoing copies; this covers frames queued before it
		}
		return block[start : start+snap], ci, true
	}
}

// pending is the number of frames already in the held block.
func (r *ring) pending() int {
	if !r.held {
		return 0
	}
	return r.left
}

func (r *ring) close() {
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
}
