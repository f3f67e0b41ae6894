package native

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
)

// ConsoleHelp lists the console commands Exec understands.
const ConsoleHelp = `commands:
  players          list the connected clients
  say TEXT         send a chat line from the host to everyone in the game
  boot SLOT        boot the client on wire slot SLOT (2 and up)
  endgame          broadcast END_GAME
  restart          broadcast RESTART_GAME (scores zeroed, ships removed)
  help             this list
  quit             stop the server`

// ErrQuit is what Exec returns for "quit".
var ErrQuit = fmt.Errorf("quit")

// PlayerInfo describes one connected client.
type PlayerInfo struct {
	Slot      byte
	GameSlot  int
	Name      string
	Addr      string
	Phase     string
	Team      int
	Idle      time.Duration
	Unacked   int
	Connected time.Duration
}

// Players lists the connected clients in slot order.
func (s *Server) Players(now time.Time) []PlayerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PlayerInfo
	for _, p := range s.sortedPeers() {
		out = append(out, PlayerInfo{Slot: p.slot, GameSlot: p.index, Name: p.name, Addr: p.addr.String(),
			Phase: p.phase.String(), Team: p.team, Idle: now.Sub(p.lastHeard), Unacked: p.conn.Unacked()})
	}
	return out
}

// EndGame broadcasts END_GAME to everyone in the game and returns how many
// clients it went to.
func (s *Server) EndGame(now time.Time, reason game.EndReason) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.endGame(reason)
	s.flushDirty(now)
	return n
}

// Restart broadcasts RESTART_GAME: scores are zeroed and ships forgotten,
// as every client returns to ship selection.
func (s *Server) Restart(now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.peers {
		p.score = game.Score{PlayerID: int32(p.slot)}
	}
	clear(s.ships)
	clear(s.objects)
	s.ended = false
	if s.match.TimeLimit > 0 {
		s.endAt = now.Add(time.Duration(s.match.TimeLimit) * time.Minute)
	}
	n := s.broadcast(&game.RestartGame{})
	s.flushDirty(now)
	s.log.Info("game restarted", "players", n)
	return n
}

// Say sends a host chat line (sender id 1) to everyone in the game.
func (s *Server) Say(now time.Time, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(text) > 255 {
		text = text[:255]
	}
	n := s.broadcast(&game.Chat{Op: game.OpChat, SenderID: stock.ServerPeer, Text: text})
	s.flushDirty(now)
	return n
}

// Boot sends the client on wire slot slot a boot notice and removes it.
func (s *Server) Boot(now time.Time, slot byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.peers {
		if p.slot == slot && p.phase != phClosing {
			s.log.Info("booting client", "client", p.addr, "slot", slot, "name", p.name)
			s.boot(now, p, stock.BootKicked, "console")
			s.flushDirty(now)
			return nil
		}
	}
	return fmt.Errorf("no client on slot %d", slot)
}

// Exec runs one console command line and returns what to show. "quit"
// returns ErrQuit.
func (s *Server) Exec(now time.Time, line string) (string, error) {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(cmd) {
	case "":
		return "", nil
	case "help", "?":
		return ConsoleHelp, nil
	case "quit", "exit":
		return "", ErrQuit
	case "players", "who":
		ps := s.Players(now)
		if len(ps) == 0 {
			return "no clients", nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-4s %-4s %-16s %-22s %-8s %-4s %s", "slot", "game", "name", "address", "phase", "team", "idle")
		for _, p := range ps {
			team := "-"
			if p.Team >= 0 {
				team = strconv.Itoa(p.Team)
			}
			fmt.Fprintf(&b, "\n%-4d %-4d %-16s %-22s %-8s %-4s %v", p.Slot, p.GameSlot, p.Name, p.Addr, p.Phase, team, p.Idle.Round(time.Millisecond))
		}
		return b.String(), nil
	case "say":
		if arg == "" {
			return "", fmt.Errorf("say needs text: say hello all")
		}
		return fmt.Sprintf("sent to %d players", s.Say(now, arg)), nil
	case "boot", "kick":
		n, err := strconv.ParseUint(arg, 0, 8)
		if err != nil {
			return "", fmt.Errorf("boot needs a wire slot number (see players): boot 2")
		}
		if err := s.Boot(now, byte(n)); err != nil {
			return "", err
		}
		return fmt.Sprintf("booted slot %d", n), nil
	case "endgame", "end":
		return fmt.Sprintf("END_GAME sent to %d players", s.EndGame(now, game.EndOver)), nil
	case "restart":
		return fmt.Sprintf("RESTART_GAME sent to %d players", s.Restart(now)), nil
	}
	return "", fmt.Errorf("unknown command %q (try help)", cmd)
}
