package native

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/cfgfile"
	"github.com/bcwire/bcwire/server/manifest"
	"github.com/bcwire/bcwire/server/stock"
	"gopkg.in/yaml.v3"
)

// Config is what a server operator sets: the server's name, port and match.
// The same keys work in a TOML or YAML file (see LoadConfig).
type Config struct {
	Name            string `toml:"name" yaml:"name"`
	Port            int    `toml:"port" yaml:"port"`
	Map             string `toml:"map" yaml:"map"`
	MaxPlayers      int    `toml:"max_players" yaml:"max_players"`
	CollisionDamage bool   `toml:"collision_damage" yaml:"collision_damage"`
	FriendlyFire    bool   `toml:"friendly_fire" yaml:"friendly_fire"`
	// TimeLimit is in minutes, FragLimit in kills; 0 means none. When the
	// time limit runs out the server broadcasts END_GAME.
	TimeLimit int `toml:"time_limit" yaml:"time_limit"`
	FragLimit int `toml:"frag_limit" yaml:"frag_limit"`
	// Password is advertised in GameSpy replies (\password\1). The stock
	// client's way of sending a password is not documented, so it is not
	// checked on connect.
	Password string `toml:"password" yaml:"password"`
	// ChecksumManifest is a file of expected checksum responses (see
	// LoadManifest); empty accepts every client.
	ChecksumManifest string `toml:"checksum_manifest" yaml:"checksum_manifest"`
	// Masters are GameSpy master servers (HOST:PORT) to register with;
	// none by default.
	Masters []string `toml:"masters" yaml:"masters"`
}

// DefaultConfig is the stock dedicated server's default match on port
// 22101.
func DefaultConfig() Config {
	return Config{Name: "bcwire native server", Port: stock.Port, Map: stock.DefaultMap,
		MaxPlayers: 8, CollisionDamage: true, FragLimit: 10}
}

// Validate reports the first setting that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("port %d is outside 0-65535", c.Port)
	case c.MaxPlayers < 1 || c.MaxPlayers > stock.MaxPlayers:
		return fmt.Errorf("max_players %d is outside 1-%d", c.MaxPlayers, stock.MaxPlayers)
	case c.TimeLimit < 0 || c.TimeLimit > 254:
		return fmt.Errorf("time_limit %d is outside 0-254 minutes (0: none)", c.TimeLimit)
	case c.FragLimit < 0 || c.FragLimit > 254:
		return fmt.Errorf("frag_limit %d is outside 0-254 (0: none)", c.FragLimit)
	case c.Map == "" || len(c.Map) > 200:
		return fmt.Errorf("map must be a mission script name such as %s", stock.DefaultMap)
	case len(c.Name) > 100:
		return fmt.Errorf("name is longer than 100 bytes")
	}
	for _, m := range c.Masters {
		if _, port, err := net.SplitHostPort(m); err != nil || port == "" {
			return fmt.Errorf("master %q: want HOST:PORT (the heartbeat port is usually %d)", m, stock.MasterPort)
		}
	}
	return nil
}

func (c Config) match() stock.Match {
	m := stock.Match{Map: c.Map, MaxPlayers: c.MaxPlayers, CollisionDamage: c.CollisionDamage,
		FriendlyFire: c.FriendlyFire, TimeLimit: c.TimeLimit, FragLimit: c.FragLimit, System: 1}
	if m.TimeLimit == 0 {
		m.TimeLimit = -1
	}
	if m.FragLimit == 0 {
		m.FragLimit = -1
	}
	return m
}

// LoadConfig reads a TOML (.toml) or YAML (.yaml, .yml) file over base:
// keys the file does not set keep base's values. Unknown keys are an
// error, so a typo does not pass silently.
func LoadConfig(path string, base Config) (Config, error) {
	b, err := cfgfile.Read(path, cfgfile.MaxConfig)
	if err != nil {
		return base, err
	}
	c := base
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		if err := cfgfile.CheckTOMLDepth(b); err != nil {
			return base, fmt.Errorf("%s: %w", path, err)
		}
		md, err := toml.Decode(string(b), &c)
		if err != nil {
			return base, fmt.Errorf("%s: %w", path, cfgfile.ShortError(err))
		}
		if und := md.Undecoded(); len(und) > 0 {
			return base, fmt.Errorf("%s: unknown key %q", path, cfgfile.Excerpt(und[0].String()))
		}
	case ".yaml", ".yml":
		if err := cfgfile.CheckYAMLDepth(b); err != nil {
			return base, fmt.Errorf("%s: %w", path, err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && err != io.EOF {
			return base, fmt.Errorf("%s: %w", path, cfgfile.ShortError(err))
		}
	default:
		return base, fmt.Errorf("%s: unknown config format: name it .toml, .yaml or .yml", path)
	}
	return c, nil
}

// Manifest is the checksum responses a good client sends, by round: the
// whole 0x21 game message. A round it does not list is accepted as sent.
type Manifest map[game.ChecksumRound][]byte

// StockManifest is the manifest of the stock client that server/stock
// models (stock.ChecksumResponse).
func StockManifest() Manifest {
	m := Manifest{}
	for _, r := range stock.ChecksumRounds {
		m[r.Round] = stock.ChecksumResponse(r.Round).Append(nil)
	}
	return m
}

// LoadManifest reads a checksum manifest: bcwire's TOML, whose [rounds]
// table maps each round ("0", "1", "2", "3", "255" or "0xFF") to the hex of
// the 0x21 message a good client sends, as `bcwire decode -V` shows it, or
// OpenBC's hash-manifest JSON (see package server/manifest).
//
//	[rounds]
//	0 = "21 00 43 E2 0C 7E ..."
func LoadManifest(path string) (Manifest, error) {
	m, err := manifest.Load(path)
	return Manifest(m), err
}

// WriteManifest writes m in the format LoadManifest reads.
func WriteManifest(w io.Writer, m Manifest) error { return manifest.Write(w, manifest.Manifest(m)) }
