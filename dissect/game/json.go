package game

// The JSON forms of the game messages: each type appends its own JSON with
// AppendJSON (see jsonenc.Appender), which `decode --json` and `decode -V`
// call directly, without encoding/json's reflection and re-validation.
// Types with a MarshalJSON implement it with AppendJSON, so encoding/json
// users see the same bytes. The messages without one are plain structs that
// encoding/json writes from their struct tags; their AppendJSON writes the
// same bytes (json_test.go holds every form to the encoding/json output it
// replaced).

import (
	"math"
	"strconv"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// appendJSONF32 appends f in strconv's shortest 'g' form (82.13282, 1e+06),
// and NaN or infinities, which a hostile message can hold and JSON cannot,
// as null.
func appendJSONF32(b []byte, f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, float64(f), 'g', -1, 32)
}

func appendUint(b []byte, v uint64) []byte { return jsonenc.Uint(b, v) }
func appendInt(b []byte, v int64) []byte   { return jsonenc.Int(b, v) }

// appendIDName appends {"<key>":"0x%08X","name":"<name>"}, the name left out
// when empty: the form of event codes, event classes and object classes.
// open is the object's start up to the value's quote: {"code":".
func appendIDName(b []byte, open string, v uint32, name string) []byte {
	b = jsonenc.Hex32(append(b, open...), v)
	b = append(b, '"')
	if name != "" {
		b = jsonenc.String(append(b, `,"name":`...), name)
	}
	return append(b, '}')
}

// appendNumberName appends {"id":n,"name":"<name>"}, the name left out when
// empty: the form of species and torpedo types.
func appendNumberName(b []byte, v uint8, name string) []byte {
	b = appendUint(append(b, `{"id":`...), uint64(v))
	if name != "" {
		b = jsonenc.String(append(b, `,"name":`...), name)
	}
	return append(b, '}')
}

// AppendJSON appends {"id":"0x3FFFFFFF","slot":0} (slot left out when the
// id belongs to no player).
func (id ObjectID) AppendJSON(b []byte) []byte {
	b = jsonenc.Hex32(append(b, `{"id":"`...), uint32(id))
	b = append(b, '"')
	if s := id.Slot(); s >= 0 {
		b = appendInt(append(b, `,"slot":`...), int64(s))
	}
	return append(b, '}')
}

// AppendJSON appends {"code":"0x008000D7","name":"ET_START_FIRING"}; the
// name is left out for codes no source names.
func (c EventCode) AppendJSON(b []byte) []byte {
	return appendIDName(b, `{"code":"`, uint32(c), c.Name())
}

// AppendJSON appends {"id":"0x00000101","name":"TGSubsystemEvent"}; the
// name is left out for classes no source describes.
func (c EventClass) AppendJSON(b []byte) []byte {
	return appendIDName(b, `{"id":"`, uint32(c), c.Name())
}

// AppendJSON appends {"id":"0x00008008","name":"ship"} (name left out for
// unknown classes).
func (c ObjectClass) AppendJSON(b []byte) []byte {
	name := ""
	if c == ClassShip || c == ClassTorpedo {
		name = c.String()
	}
	return appendIDName(b, `{"id":"`, uint32(c), name)
}

// AppendJSON appends {"id":5,"name":"SOVEREIGN"} (name left out beyond the
// stock table).
func (s Species) AppendJSON(b []byte) []byte { return appendNumberName(b, uint8(s), s.Name()) }

// AppendJSON appends {"id":2,"name":"PHOTON"} (name left out beyond the
// stock table).
func (t TorpedoTypeIndex) AppendJSON(b []byte) []byte {
	return appendNumberName(b, uint8(t), t.Name())
}

// AppendJSON appends [w,x,y,z] (NaN and infinities as null).
func (q Quaternion) AppendJSON(b []byte) []byte {
	b = appendJSONF32(append(b, '['), q.W)
	b = appendJSONF32(append(b, ','), q.X)
	b = appendJSONF32(append(b, ','), q.Y)
	b = appendJSONF32(append(b, ','), q.Z)
	return append(b, ']')
}

// AppendJSON appends {"value":"0x9D","names":"POS|FWD|UP|SPEED|WEAPONS"}.
func (f StateFlags) AppendJSON(b []byte) []byte {
	b = append(b, `{"value":"0x`...)
	b = append(b, hexDigits[f>>4], hexDigits[f&0xF])
	b = append(b, `","names":"`...)
	if f == 0 {
		b = append(b, "none"...)
	}
	sep := false
	for i, n := range stateFlagNames {
		if f&(1<<i) != 0 {
			if sep {
				b = append(b, '|')
			}
			b, sep = append(b, n...), true
		}
	}
	return append(b, `"}`...)
}

const hexDigits = "0123456789ABCDEF"

// AppendJSON appends the hash as a "0x%08X" string.
func (h Hash32) AppendJSON(b []byte) []byte {
	return append(jsonenc.Hex32(append(b, '"'), uint32(h)), '"')
}

// AppendJSON appends the bytes as one upper-case hex string.
func (h HexData) AppendJSON(b []byte) []byte { return jsonenc.Hex(b, h) }

// appendContactJSON appends a contact point as the raw direction bytes'
// vector, the magnitude byte, and the point in bounding-radius units:
// {"dir":[x,y,z],"mag":n,"point":[x,y,z]}.
func appendContactJSON(b []byte, c dissect.Contact) []byte {
	b = c.Dir.AppendJSON(append(b, `{"dir":`...))
	b = appendUint(append(b, `,"mag":`...), uint64(c.Mag))
	b = c.Vec().AppendJSON(append(b, `,"point":`...))
	return append(b, '}')
}

// appendContactsJSON appends the contact count and the contacts:
// "contact_count":n,"contacts":[...] (the list is [] when empty).
func appendContactsJSON(b []byte, cs []dissect.Contact) []byte {
	b = appendInt(append(b, `"contact_count":`...), int64(len(cs)))
	b = append(b, `,"contacts":[`...)
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendContactJSON(b, c)
	}
	return append(b, ']')
}

// AppendJSON appends {"data":"<hex>"}.
func (m *Raw) AppendJSON(b []byte) []byte {
	return append(jsonenc.Hex(append(b, `{"data":`...), m.Data), '}')
}

// AppendJSON appends {"data":"<hex>"}.
func (m *Dead) AppendJSON(b []byte) []byte {
	return append(jsonenc.Hex(append(b, `{"data":`...), m.Data), '}')
}

// AppendJSON appends the header and the fields of the event's class only.
func (e *Event) AppendJSON(b []byte) []byte {
	return append(e.appendJSONFields(append(b, '{')), '}')
}

// appendJSONFields appends the event's members without the braces.
func (e *Event) appendJSONFields(b []byte) []byte {
	b = e.Class.AppendJSON(append(b, `"class":`...))
	b = e.Code.AppendJSON(append(b, `,"code":`...))
	b = e.Source.AppendJSON(append(b, `,"source":`...))
	b = e.Dest.AppendJSON(append(b, `,"dest":`...))
	switch e.Class {
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		b = appendUint(append(b, `,"value":`...), uint64(e.Value))
	case EventClassObjPtr:
		b = e.ObjPtr.AppendJSON(append(b, `,"obj_ptr":`...))
	case EventClassObjectExploding:
		b = appendInt(append(b, `,"firing_player":`...), int64(e.FiringPlayer))
		b = appendJSONF32(append(b, `,"lifetime":`...), e.Lifetime)
	case EventClassCollision:
		b = appendContactsJSON(append(b, ','), e.Contacts)
		b = appendJSONF32(append(b, `,"force":`...), e.Force)
	case EventClassStartFiring:
		b = jsonenc.Hex(append(b, `,"firing_data":`...), e.FiringData[:])
	case EventClassStartWarp:
		b = jsonenc.String(append(b, `,"set_name":`...), e.SetName)
		b = e.Destination.AppendJSON(append(b, `,"destination":`...))
		b = appendJSONF32(append(b, `,"speed":`...), e.Speed)
	case EventClassBase, EventClassSubsystem:
	default:
		b = jsonenc.Hex(append(b, `,"extra":`...), e.Extra)
	}
	return b
}

// AppendJSON appends the event's fields.
func (m *PythonEvent) AppendJSON(b []byte) []byte { return m.Event.AppendJSON(b) }

// AppendJSON appends the event's fields, the receiver's event code, and the
// value byte's meaning for SetPhaserLevel and TorpedoTypeChange; the bare
// form is {"bare":true,"object":...}.
func (m *EventForward) AppendJSON(b []byte) []byte {
	if m.Bare {
		b = m.Object.AppendJSON(append(b, `{"bare":true,"object":`...))
		return append(b, '}')
	}
	b = m.Event.appendJSONFields(append(b, '{'))
	b = m.ReceiverCode().AppendJSON(append(b, `,"receiver_code":`...))
	if m.hasValue() {
		switch m.Op {
		case OpSetPhaserLevel:
			b = jsonenc.String(append(b, `,"phaser_level":`...), m.PhaserLevel().String())
		case OpTorpTypeChange:
			b = m.TorpedoType().AppendJSON(append(b, `,"torpedo_type":`...))
		}
	}
	return append(b, '}')
}

// AppendJSON appends the event header, the contact count, each contact's
// decoded point, and the force.
func (m *CollisionEffect) AppendJSON(b []byte) []byte {
	b = m.Class.AppendJSON(append(b, `{"class":`...))
	b = m.Code.AppendJSON(append(b, `,"code":`...))
	b = m.Source.AppendJSON(append(b, `,"source":`...))
	b = m.Target.AppendJSON(append(b, `,"target":`...))
	b = appendContactsJSON(append(b, ','), m.Contacts)
	b = appendJSONF32(append(b, `,"force":`...), m.Force)
	return append(b, '}')
}

// AppendJSON leaves the target out when there is none.
func (m *BeamFire) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = appendUint(append(b, `,"flags":`...), uint64(m.Flags))
	b = m.Direction.AppendJSON(append(b, `,"direction":`...))
	b = appendUint(append(b, `,"more_flags":`...), uint64(m.MoreFlags))
	b = jsonenc.Bool(append(b, `,"has_target":`...), m.MoreFlags.HasTarget())
	if m.MoreFlags.HasTarget() {
		b = m.Target.AppendJSON(append(b, `,"target":`...))
	}
	return append(b, '}')
}

// AppendJSON leaves the target fields out when there is no target.
func (m *TorpedoFire) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = m.Type.AppendJSON(append(b, `,"torpedo_type":`...))
	b = appendUint(append(b, `,"flags":`...), uint64(m.Flags))
	b = jsonenc.Bool(append(b, `,"has_target":`...), m.Flags.HasTarget())
	b = m.Velocity.AppendJSON(append(b, `,"velocity":`...))
	if m.Flags.HasTarget() {
		b = m.Target.AppendJSON(append(b, `,"target":`...))
		b = appendContactJSON(append(b, `,"target_point":`...), m.TargetPoint)
	}
	return append(b, '}')
}

// AppendJSON appends the envelope, the header and the class's fields.
func (m *ObjCreate) AppendJSON(b []byte) []byte {
	b = appendUint(append(b, `{"owner":`...), uint64(m.Owner))
	if m.HasTeam {
		b = appendUint(append(b, `,"team":`...), uint64(m.Team))
	}
	b = m.Class.AppendJSON(append(b, `,"class":`...))
	b = m.Object.AppendJSON(append(b, `,"object":`...))
	switch m.Class {
	case ClassShip:
		b = m.Species.AppendJSON(append(b, `,"species":`...))
		if spec := ShipBySpecies(m.Species); spec != nil {
			b = jsonenc.String(append(b, `,"ship_class":`...), spec.Name)
		}
		b = m.Position.AppendJSON(append(b, `,"position":`...))
		b = m.Orientation.AppendJSON(append(b, `,"orientation":`...))
		b = appendJSONF32(append(b, `,"speed":`...), m.Speed)
		b = jsonenc.Hex(append(b, `,"reserved":`...), m.Reserved[:])
		b = jsonenc.String(append(b, `,"player_name":`...), m.PlayerName)
		b = jsonenc.String(append(b, `,"set_name":`...), m.SetName)
		if m.SubsystemData == nil && len(m.Subsystems) > 0 {
			b = append(b, `,"subsystems":[`...)
			for i := range m.Subsystems {
				if i > 0 {
					b = append(b, ',')
				}
				b = m.Subsystems[i].AppendJSON(b)
			}
			b = append(b, ']')
		} else {
			b = jsonenc.Hex(append(b, `,"subsystem_data":`...), m.SubsystemData)
			if m.SubsystemsNote != "" {
				b = jsonenc.String(append(b, `,"subsystems_undecoded":`...), m.SubsystemsNote)
			}
		}
	case ClassTorpedo:
		b = m.TorpedoType.AppendJSON(append(b, `,"torpedo_type":`...))
	}
	return append(b, '}')
}

// AppendJSON appends the header and the fields of the flags that are set.
func (m *StateUpdate) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = appendJSONF32(append(b, `,"game_time":`...), m.GameTime)
	b = m.Flags.AppendJSON(append(b, `,"flags":`...))
	f := m.Flags
	if f&StatePosition != 0 {
		b = m.Position.AppendJSON(append(b, `,"position":`...))
		b = jsonenc.Bool(append(b, `,"has_hash":`...), m.HasHash)
		if m.HasHash {
			h := m.Hash
			b = append(b, `,"hash":"0x`...)
			b = append(b, hexDigits[h>>12], hexDigits[h>>8&0xF], hexDigits[h>>4&0xF], hexDigits[h&0xF], '"')
		}
	}
	if f&StateDelta != 0 {
		b = m.Delta.AppendJSON(append(b, `,"delta":`...))
	}
	if f&StateForward != 0 {
		b = m.Forward.AppendJSON(append(b, `,"forward":`...))
	}
	if f&StateUp != 0 {
		b = m.Up.AppendJSON(append(b, `,"up":`...))
	}
	if f&StateSpeed != 0 {
		b = m.Speed.AppendJSON(append(b, `,"speed":`...))
	}
	if f&StateCloak != 0 {
		b = jsonenc.Bool(append(b, `,"cloaked":`...), m.Cloaked)
	}
	if f&StateSubsystems != 0 {
		b = appendUint(append(b, `,"subsystem_start":`...), uint64(m.SubsystemStart))
		if m.SubsystemsUndecoded {
			b = jsonenc.String(append(b, `,"subsystems_undecoded":`...), m.subsystemNote())
			if len(m.SubsystemLeadBits) > 0 {
				b = append(b, `,"subsystem_lead_bits":[`...)
				for i, v := range m.SubsystemLeadBits {
					if i > 0 {
						b = append(b, ',')
					}
					b = jsonenc.Bool(b, v)
				}
				b = append(b, ']')
			}
			b = jsonenc.Hex(append(b, `,"subsystem_data":`...), m.SubsystemData)
		} else {
			if m.Class != nil {
				b = jsonenc.String(append(b, `,"class":`...), m.Class.Name)
			}
			b = append(b, `,"subsystems":[`...)
			for i := range m.Subsystems {
				if i > 0 {
					b = append(b, ',')
				}
				b = m.Subsystems[i].AppendJSON(b)
			}
			b = append(b, ']')
		}
	}
	if f&StateWeapons != 0 {
		b = append(b, `,"weapons":[`...)
		for i, w := range m.Weapons {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendUint(append(b, `{"index":`...), uint64(w.Index))
			b = appendUint(append(b, `,"health":`...), uint64(w.Health))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// formatMembers are the "format" members of the known formats, written
// whole rather than escaped for every state.
var formatMembers = func() (t [len(subsystemFormatNames)]string) {
	for f := range t {
		t[f] = string(jsonenc.String([]byte(`,"format":`), SubsystemFormat(f).String()))
	}
	return t
}()

// AppendJSON appends the fields that the state's format puts on the wire,
// with each child's name next to its condition.
func (s *SubsystemState) AppendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"index":`...), int64(s.Index))
	if s.Name != "" {
		b = jsonenc.String(append(b, `,"name":`...), s.Name)
	}
	if int(s.Format) < len(formatMembers) {
		b = append(b, formatMembers[s.Format]...)
	} else {
		b = jsonenc.String(append(b, `,"format":`...), s.Format.String())
	}
	b = appendUint(append(b, `,"condition":`...), uint64(s.Condition))
	if len(s.Children) > 0 {
		b = append(b, `,"children":[`...)
		for i, c := range s.Children {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if i < len(s.ChildNames) && s.ChildNames[i] != "" {
				b = jsonenc.String(append(b, `"name":`...), s.ChildNames[i])
				b = append(b, ',')
			}
			b = appendUint(append(b, `"condition":`...), uint64(c))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		b = jsonenc.Bool(append(b, `,"has_power":`...), s.HasPower)
		if s.HasPower {
			b = appendUint(append(b, `,"power":`...), uint64(s.Power))
		}
		if s.Off {
			b = append(b, `,"off":true`...)
		}
		if s.Format == SubsystemShield {
			b = appendByteList(append(b, `,"facings":`...), s.Facings)
		}
		if s.Extra != nil {
			b = jsonenc.Hex(append(b, `,"extra":`...), s.Extra)
		}
	case SubsystemPower:
		b = appendUint(append(b, `,"main_battery":`...), uint64(s.MainBattery))
		b = appendUint(append(b, `,"backup_battery":`...), uint64(s.BackupBattery))
	}
	return append(b, '}')
}

// The messages below have no MarshalJSON; each AppendJSON writes what
// encoding/json makes of the struct tags.

// AppendJSON appends the settings. A game time that is NaN or infinite has
// no JSON form (encoding/json refuses it): nothing is appended.
func (m *Settings) AppendJSON(b []byte) []byte {
	start := len(b)
	b, ok := jsonenc.Float32(append(b, `{"game_time":`...), m.GameTime)
	if !ok {
		return b[:start]
	}
	b = jsonenc.Bool(append(b, `,"collision_damage":`...), m.CollisionDamage)
	b = jsonenc.Bool(append(b, `,"friendly_fire":`...), m.FriendlyFire)
	b = appendUint(append(b, `,"player_slot":`...), uint64(m.PlayerSlot))
	b = jsonenc.String(append(b, `,"map":`...), m.Map)
	b = jsonenc.Bool(append(b, `,"checksum_correction":`...), m.ChecksumCorrection)
	if len(m.CorrectionData) > 0 {
		b = m.CorrectionData.AppendJSON(append(b, `,"correction_data":`...))
	}
	return append(b, '}')
}

// appendEmptyJSON is the form of the messages without fields.
func appendEmptyJSON(b []byte) []byte { return append(b, "{}"...) }

func (m *GameInit) AppendJSON(b []byte) []byte         { return appendEmptyJSON(b) }
func (m *HostMsg) AppendJSON(b []byte) []byte          { return appendEmptyJSON(b) }
func (m *ChecksumComplete) AppendJSON(b []byte) []byte { return appendEmptyJSON(b) }
func (m *FileTransferACK) AppendJSON(b []byte) []byte  { return appendEmptyJSON(b) }
func (m *RestartGame) AppendJSON(b []byte) []byte      { return appendEmptyJSON(b) }

// appendObjectJSON is the form of the messages that are one object id.
func appendObjectJSON(b []byte, id ObjectID) []byte {
	return append(id.AppendJSON(append(b, `{"object":`...)), '}')
}

func (m *DestroyObject) AppendJSON(b []byte) []byte { return appendObjectJSON(b, m.Object) }
func (m *ObjNotFound) AppendJSON(b []byte) []byte   { return appendObjectJSON(b, m.Object) }
func (m *RequestObject) AppendJSON(b []byte) []byte { return appendObjectJSON(b, m.Object) }

func (m *Chat) AppendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"sender_id":`...), int64(m.SenderID))
	b = jsonenc.String(append(b, `,"text":`...), m.Text)
	return append(b, '}')
}

func (m *ChecksumRequest) AppendJSON(b []byte) []byte {
	b = appendUint(append(b, `{"round":`...), uint64(m.Round))
	b = jsonenc.String(append(b, `,"dir":`...), m.Dir)
	b = jsonenc.String(append(b, `,"filter":`...), m.Filter)
	b = jsonenc.Bool(append(b, `,"recursive":`...), m.Recursive)
	return append(b, '}')
}

func (m *ChecksumResponse) AppendJSON(b []byte) []byte {
	b = appendUint(append(b, `{"round":`...), uint64(m.Round))
	if m.RefHash != 0 {
		b = m.RefHash.AppendJSON(append(b, `,"ref_hash":`...))
	}
	b = m.DirHash.AppendJSON(append(b, `,"dir_hash":`...))
	b = m.Tree.appendJSON(append(b, `,"tree":`...))
	return append(b, '}')
}

// appendJSON writes files as null when the slice is nil (as encoding/json
// does) and leaves subdirs out when there are none.
func (t *ChecksumTree) appendJSON(b []byte) []byte {
	b = append(b, `{"files":`...)
	if t.Files == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, f := range t.Files {
			if i > 0 {
				b = append(b, ',')
			}
			b = f.Name.AppendJSON(append(b, `{"name":`...))
			b = f.Content.AppendJSON(append(b, `,"content":`...))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(t.Subdirs) > 0 {
		b = append(b, `,"subdirs":[`...)
		for i := range t.Subdirs {
			if i > 0 {
				b = append(b, ',')
			}
			s := &t.Subdirs[i]
			b = s.Name.AppendJSON(append(b, `{"name":`...))
			b = s.Tree.appendJSON(append(b, `,"tree":`...))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func (m *ChecksumFail) AppendJSON(b []byte) []byte {
	return append(jsonenc.String(append(b, `{"file":`...), m.File), '}')
}

func (m *DeletePlayerUI) AppendJSON(b []byte) []byte {
	b = m.Class.AppendJSON(append(b, `{"class":`...))
	b = m.Code.AppendJSON(append(b, `,"code":`...))
	b = m.Source.AppendJSON(append(b, `,"source":`...))
	b = m.Target.AppendJSON(append(b, `,"target":`...))
	b = appendUint(append(b, `,"peer":`...), uint64(m.Peer))
	return append(b, '}')
}

func (m *DeletePlayerAnim) AppendJSON(b []byte) []byte {
	return append(jsonenc.String(append(b, `{"name":`...), m.Name), '}')
}

func (m *EnterSet) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = jsonenc.String(append(b, `,"set_name":`...), m.SetName)
	if m.Unterminated {
		b = append(b, `,"unterminated":true`...)
	}
	return append(b, '}')
}

func (m *Explosion) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = m.Impact.AppendJSON(append(b, `,"impact":`...))
	b = m.Radius.AppendJSON(append(b, `,"radius":`...))
	b = m.Damage.AppendJSON(append(b, `,"damage":`...))
	return append(b, '}')
}

func (m *FileTransfer) AppendJSON(b []byte) []byte {
	b = jsonenc.String(append(b, `{"name":`...), m.Name)
	b = m.Data.AppendJSON(append(b, `,"data":`...))
	return append(b, '}')
}

func (m *MissionInit) AppendJSON(b []byte) []byte {
	b = appendUint(append(b, `{"player_limit":`...), uint64(m.PlayerLimit))
	b = appendUint(append(b, `,"system":`...), uint64(m.System))
	b = appendUint(append(b, `,"time_limit":`...), uint64(m.TimeLimit))
	if m.EndTime != 0 {
		b = appendInt(append(b, `,"end_time":`...), int64(m.EndTime))
	}
	b = appendUint(append(b, `,"frag_limit":`...), uint64(m.FragLimit))
	return append(b, '}')
}

// AppendJSON writes others as null when the slice is nil, as encoding/json
// does.
func (m *ScoreChange) AppendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"killer_id":`...), int64(m.KillerID))
	if m.KillerKills != 0 {
		b = appendInt(append(b, `,"killer_kills":`...), int64(m.KillerKills))
	}
	if m.KillerScore != 0 {
		b = appendInt(append(b, `,"killer_score":`...), int64(m.KillerScore))
	}
	b = appendInt(append(b, `,"victim_id":`...), int64(m.VictimID))
	b = appendInt(append(b, `,"victim_deaths":`...), int64(m.VictimDeaths))
	b = append(b, `,"others":`...)
	if m.Others == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, o := range m.Others {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInt(append(b, `{"player_id":`...), int64(o.PlayerID))
			b = appendInt(append(b, `,"score":`...), int64(o.Score))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func (m *Score) AppendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"player_id":`...), int64(m.PlayerID))
	b = appendInt(append(b, `,"kills":`...), int64(m.Kills))
	b = appendInt(append(b, `,"deaths":`...), int64(m.Deaths))
	b = appendInt(append(b, `,"score":`...), int64(m.Score))
	return append(b, '}')
}

func (m *EndGame) AppendJSON(b []byte) []byte {
	return append(appendInt(append(b, `{"reason":`...), int64(m.Reason)), '}')
}

func (m *NewPlayerInGame) AppendJSON(b []byte) []byte {
	return append(jsonenc.Bool(append(b, `{"flag":`...), m.Flag), '}')
}

func (m *ScoreInit) AppendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"player_id":`...), int64(m.PlayerID))
	b = appendInt(append(b, `,"kills":`...), int64(m.Kills))
	b = appendInt(append(b, `,"deaths":`...), int64(m.Deaths))
	b = appendInt(append(b, `,"score":`...), int64(m.Score))
	b = appendUint(append(b, `,"team":`...), uint64(m.Team))
	return append(b, '}')
}

func (m *TeamScore) AppendJSON(b []byte) []byte {
	b = appendUint(append(b, `{"team":`...), uint64(m.Team))
	b = appendInt(append(b, `,"kills":`...), int64(m.Kills))
	b = appendInt(append(b, `,"score":`...), int64(m.Score))
	return append(b, '}')
}

func (m *TeamMessage) AppendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"player_id":`...), int64(m.PlayerID))
	b = appendUint(append(b, `,"team":`...), uint64(m.Team))
	return append(b, '}')
}

func (m *UICollision) AppendJSON(b []byte) []byte {
	return append(jsonenc.Bool(append(b, `{"collision_damage":`...), m.CollisionDamage), '}')
}
