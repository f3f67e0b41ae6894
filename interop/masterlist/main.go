// Command masterlist asks a GameSpy master server for its list of Bridge
// Commander servers over TCP, as the game's server browser does: it
// answers the master's \secure\ challenge with \validate\ (the game's
// key), sends \list\cmp\gamename\bcommander\final\ and prints each
// address:port of the binary list on a line of its own. It is used by
// interop/master.sh; run it by hand with
//
//	go run ./interop/masterlist -master 127.0.0.1:28900
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/stock"
)

func main() {
	master := flag.String("master", "127.0.0.1:28900", "the master server's TCP list address")
	game := flag.String("game", "bcommander", "the GameSpy game name")
	key := flag.String("key", stock.GameSpyKey, "the game's GameSpy secret key")
	timeout := flag.Duration("timeout", 10*time.Second, "give up after this long")
	flag.Parse()
	servers, err := list(*master, *game, *key, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "masterlist:", err)
		os.Exit(1)
	}
	for _, s := range servers {
		fmt.Println(s)
	}
}

func list(addr, game, key string, timeout time.Duration) ([]string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		return nil, fmt.Errorf("no challenge: %w", err)
	}
	m, err := dissect.ParseMasterMessage(buf[:n], true)
	if err != nil || m.Kind != dissect.MasterChallenge {
		return nil, fmt.Errorf("the master's first message is not a \\secure\\ challenge: %q", buf[:n])
	}
	var challenge string
	for _, f := range m.Text.Fields {
		if f.Key == "secure" {
			challenge = f.Value
		}
	}
	// The stock client's messages (stock-payloads-2.json).
	auth := fmt.Sprintf(`\gamename\%s\gamever\1.6\location\0\validate\%s\final\\queryid\1.1\`, game, stock.Validate(challenge, key))
	req := fmt.Sprintf(`\list\cmp\gamename\%s\final\`, game)
	if _, err := c.Write([]byte(auth)); err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(req)); err != nil {
		return nil, err
	}
	sp := dissect.MasterSplitter{FromMaster: true}
	var got []byte
	for got == nil {
		n, err := c.Read(buf)
		if n > 0 {
			if msgs := sp.Push(buf[:n]); len(msgs) > 0 {
				got = bytes.Clone(msgs[len(msgs)-1])
			}
		}
		if err != nil && got == nil {
			if rest := sp.Flush(); rest != nil {
				return nil, fmt.Errorf("the list ends without \\final\\ (%d bytes)", len(rest))
			}
			return nil, fmt.Errorf("no list: %w", err)
		}
	}
	l, err := dissect.ParseMasterMessage(got, true)
	if err != nil {
		return nil, fmt.Errorf("list: %w (%q)", err, got)
	}
	if l.Kind != dissect.MasterList {
		return nil, fmt.Errorf("the answer is not a list: %s", l.String())
	}
	out := make([]string, len(l.Servers))
	for i, s := range l.Servers {
		out[i] = s.String()
	}
	return out, nil
}
