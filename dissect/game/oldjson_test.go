package game

// The JSON forms as they were before AppendJSON, kept as the reference that
// json_test.go holds every AppendJSON to byte for byte: the old MarshalJSON
// bodies (built on encoding/json through lcJSON and evJSON) on mirror types
// named old*, and, for the messages encoding/json wrote from struct tags,
// mirror structs with the same tags whose nested values are old* types.
// Messages whose fields are all plain Go types are marshalled as they are:
// encoding/json's reflection is their reference.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/bcwire/bcwire/dissect"
)

// oldMessageJSON is json.Marshal(m) as it was before AppendJSON.
func oldMessageJSON(m Message) ([]byte, error) {
	switch m := m.(type) {
	case *Raw:
		return []byte(fmt.Sprintf(`{"data":"%X"}`, m.Data)), nil
	case *StateUpdate:
		return json.Marshal(oldStateUpdate(*m))
	case *ObjCreate:
		return json.Marshal(oldObjCreate(*m))
	case *PythonEvent:
		return json.Marshal(oldEvent(m.Event))
	case *EventForward:
		return json.Marshal(oldEventForward(*m))
	case *CollisionEffect:
		return json.Marshal(oldCollisionEffect(*m))
	case *BeamFire:
		return json.Marshal(oldBeamFire(*m))
	case *TorpedoFire:
		return json.Marshal(oldTorpedoFire(*m))
	case *Settings:
		return json.Marshal(oldSettings{m.GameTime, m.CollisionDamage, m.FriendlyFire, m.PlayerSlot, m.Map,
			m.ChecksumCorrection, oldHexData(m.CorrectionData)})
	case *ChecksumResponse:
		return json.Marshal(oldChecksumResponse{m.Round, oldHash32(m.RefHash), oldHash32(m.DirHash), oldTree(&m.Tree)})
	case *Dead:
		return json.Marshal(struct {
			Data oldHexData `json:"data"`
		}{oldHexData(m.Data)})
	case *DeletePlayerUI:
		return json.Marshal(struct {
			Class  oldEventClass `json:"class"`
			Code   oldEventCode  `json:"code"`
			Source oldObjectID   `json:"source"`
			Target oldObjectID   `json:"target"`
			Peer   uint8         `json:"peer"`
		}{oldEventClass(m.Class), oldEventCode(m.Code), oldObjectID(m.Source), oldObjectID(m.Target), m.Peer})
	case *DestroyObject:
		return json.Marshal(oldObjectOnly{oldObjectID(m.Object)})
	case *ObjNotFound:
		return json.Marshal(oldObjectOnly{oldObjectID(m.Object)})
	case *RequestObject:
		return json.Marshal(oldObjectOnly{oldObjectID(m.Object)})
	case *EnterSet:
		return json.Marshal(struct {
			Object       oldObjectID `json:"object"`
			SetName      string      `json:"set_name"`
			Unterminated bool        `json:"unterminated,omitempty"`
		}{oldObjectID(m.Object), m.SetName, m.Unterminated})
	case *Explosion:
		return json.Marshal(struct {
			Object oldObjectID `json:"object"`
			Impact oldCV4      `json:"impact"`
			Radius oldCF16     `json:"radius"`
			Damage oldCF16     `json:"damage"`
		}{oldObjectID(m.Object), oldCV4(m.Impact), oldCF16(m.Radius), oldCF16(m.Damage)})
	case *FileTransfer:
		return json.Marshal(struct {
			Name string     `json:"name"`
			Data oldHexData `json:"data"`
		}{m.Name, oldHexData(m.Data)})
	case *Chat, *ChecksumRequest, *ChecksumFail, *ChecksumComplete, *GameInit, *HostMsg, *FileTransferACK,
		*RestartGame, *DeletePlayerAnim, *MissionInit, *ScoreChange, *Score, *EndGame, *NewPlayerInGame,
		*ScoreInit, *TeamScore, *TeamMessage, *UICollision:
		return json.Marshal(m)
	}
	return nil, fmt.Errorf("no old JSON form for %T", m)
}

// lcJSON and evJSON as they were.

type oldLcJSON struct {
	b   []byte
	err error
}

func (j *oldLcJSON) add(name string, v any) {
	vb, err := json.Marshal(v)
	if err != nil {
		if j.err == nil {
			j.err = fmt.Errorf("%s: %w", name, err)
		}
		return
	}
	j.addRaw(name, vb)
}

func (j *oldLcJSON) addRaw(name string, raw []byte) {
	if len(j.b) == 0 {
		j.b = append(j.b, '{')
	} else {
		j.b = append(j.b, ',')
	}
	j.b = strconv.AppendQuote(j.b, name)
	j.b = append(j.b, ':')
	j.b = append(j.b, raw...)
}

func (j *oldLcJSON) done() ([]byte, error) {
	if len(j.b) == 0 {
		j.b = append(j.b, '{')
	}
	return append(j.b, '}'), j.err
}

type oldEvJSON struct {
	b   []byte
	err error
}

func (j *oldEvJSON) add(name string, v any) {
	if j.err != nil {
		return
	}
	if len(j.b) == 0 {
		j.b = append(j.b, '{')
	} else {
		j.b = append(j.b, ',')
	}
	j.b = strconv.AppendQuote(j.b, name)
	j.b = append(j.b, ':')
	vb, err := json.Marshal(v)
	if err != nil {
		j.err = fmt.Errorf("%s: %w", name, err)
		return
	}
	j.b = append(j.b, vb...)
}

func (j *oldEvJSON) done() ([]byte, error) {
	if len(j.b) == 0 {
		j.b = append(j.b, '{')
	}
	return append(j.b, '}'), j.err
}

// The float forms.

type oldLcFloat float32

func (f oldLcFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 32), nil
}

type oldJSONF32 float32

func (f oldJSONF32) MarshalJSON() ([]byte, error) {
	v := float32(f)
	if v != v || v > 3.4028235e38 || v < -3.4028235e38 {
		return []byte("null"), nil
	}
	return []byte(fmt.Sprint(v)), nil
}

// oldJSONFloat is dissect's four-decimal float form.
func oldJSONFloat(f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return []byte("null")
	}
	return strconv.AppendFloat(nil, math.Round(float64(f)*1e4)/1e4, 'f', -1, 64)
}

// dissect's vector forms.

type oldVec3 dissect.Vec3

func (v oldVec3) MarshalJSON() ([]byte, error) {
	b := append([]byte{'['}, oldJSONFloat(v.X)...)
	b = append(append(b, ','), oldJSONFloat(v.Y)...)
	b = append(append(b, ','), oldJSONFloat(v.Z)...)
	return append(b, ']'), nil
}

type oldDir3 dissect.Dir3

func (d oldDir3) MarshalJSON() ([]byte, error) { return oldVec3(dissect.Dir3(d).Vec()).MarshalJSON() }

type oldCV4 dissect.CV4

func (c oldCV4) MarshalJSON() ([]byte, error) { return oldVec3(dissect.CV4(c).Vec()).MarshalJSON() }

type oldCF16 dissect.CF16

func (c oldCF16) MarshalJSON() ([]byte, error) { return oldJSONFloat(dissect.CF16(c).Float()), nil }

// The game's value forms.

type oldObjectID ObjectID

func (id oldObjectID) MarshalJSON() ([]byte, error) {
	b := []byte(`{"id":"0x`)
	b = append(b, fmt.Sprintf("%08X", uint32(id))...)
	b = append(b, '"')
	if s := ObjectID(id).Slot(); s >= 0 {
		b = append(b, `,"slot":`...)
		b = strconv.AppendInt(b, int64(s), 10)
	}
	return append(b, '}'), nil
}

func oldCodeNameJSON(key string, v uint32, name string) []byte {
	b := append([]byte(`{"`), key...)
	b = append(b, `":"`...)
	b = append(b, hex32(v)...)
	b = append(b, '"')
	if name != "" {
		b = append(b, `,"name":`...)
		b = strconv.AppendQuote(b, name)
	}
	return append(b, '}')
}

type oldEventCode EventCode

func (c oldEventCode) MarshalJSON() ([]byte, error) {
	return oldCodeNameJSON("code", uint32(c), EventCode(c).Name()), nil
}

type oldEventClass EventClass

func (c oldEventClass) MarshalJSON() ([]byte, error) {
	return oldCodeNameJSON("id", uint32(c), EventClass(c).Name()), nil
}

type oldObjectClass ObjectClass

func (c oldObjectClass) MarshalJSON() ([]byte, error) {
	b := fmt.Appendf(nil, `{"id":"0x%08X"`, uint32(c))
	if ObjectClass(c) == ClassShip || ObjectClass(c) == ClassTorpedo {
		b = fmt.Appendf(b, `,"name":%q`, ObjectClass(c).String())
	}
	return append(b, '}'), nil
}

type oldQuaternion Quaternion

func (q oldQuaternion) MarshalJSON() ([]byte, error) {
	var b []byte
	for i, v := range [4]float32{q.W, q.X, q.Y, q.Z} {
		if i == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		f, _ := oldLcFloat(v).MarshalJSON()
		b = append(b, f...)
	}
	return append(b, ']'), nil
}

type oldSpecies Species

func (s oldSpecies) MarshalJSON() ([]byte, error) {
	b := strconv.AppendInt([]byte(`{"id":`), int64(s), 10)
	if n := Species(s).Name(); n != "" {
		b = append(b, `,"name":`...)
		b = strconv.AppendQuote(b, n)
	}
	return append(b, '}'), nil
}

type oldTorpedoTypeIndex TorpedoTypeIndex

func (t oldTorpedoTypeIndex) MarshalJSON() ([]byte, error) {
	b := fmt.Appendf(nil, `{"id":%d`, uint8(t))
	if n := TorpedoTypeIndex(t).Name(); n != "" {
		b = fmt.Appendf(b, `,"name":%q`, n)
	}
	return append(b, '}'), nil
}

type oldStateFlags StateFlags

func (f oldStateFlags) MarshalJSON() ([]byte, error) {
	b := fmt.Appendf(nil, `{"value":"0x%02X","names":`, uint8(f))
	b = strconv.AppendQuote(b, StateFlags(f).String())
	return append(b, '}'), nil
}

type oldHash32 Hash32

func (h oldHash32) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`"0x%08X"`, uint32(h))), nil
}

type oldHexData []byte

func (h oldHexData) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf(`"%X"`, []byte(h))), nil }

type oldEvHex []byte

func (h oldEvHex) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf(`"%X"`, []byte(h))), nil }

func oldLcHex(b []byte) []byte { return fmt.Appendf(nil, `"%X"`, b) }

type oldContactJSON struct {
	Dir   oldDir3 `json:"dir"`
	Mag   uint8   `json:"mag"`
	Point oldVec3 `json:"point"`
}

func oldContactsJSON(cs []dissect.Contact) []oldContactJSON {
	out := make([]oldContactJSON, len(cs))
	for i, c := range cs {
		out[i] = oldContactJSON{Dir: oldDir3(c.Dir), Mag: c.Mag, Point: oldVec3(c.Vec())}
	}
	return out
}

// The messages with a MarshalJSON of their own.

type oldStateUpdate StateUpdate

func (m oldStateUpdate) MarshalJSON() ([]byte, error) {
	var j oldLcJSON
	j.add("object", oldObjectID(m.Object))
	j.add("game_time", oldLcFloat(m.GameTime))
	j.add("flags", oldStateFlags(m.Flags))
	f := m.Flags
	if f&StatePosition != 0 {
		j.add("position", oldVec3(m.Position))
		j.add("has_hash", m.HasHash)
		if m.HasHash {
			j.addRaw("hash", fmt.Appendf(nil, `"0x%04X"`, m.Hash))
		}
	}
	if f&StateDelta != 0 {
		j.add("delta", oldCV4(m.Delta))
	}
	if f&StateForward != 0 {
		j.add("forward", oldDir3(m.Forward))
	}
	if f&StateUp != 0 {
		j.add("up", oldDir3(m.Up))
	}
	if f&StateSpeed != 0 {
		j.add("speed", oldCF16(m.Speed))
	}
	if f&StateCloak != 0 {
		j.add("cloaked", m.Cloaked)
	}
	if f&StateSubsystems != 0 {
		j.add("subsystem_start", m.SubsystemStart)
		if m.SubsystemsUndecoded {
			su := StateUpdate(m)
			j.add("subsystems_undecoded", su.subsystemNote())
			if len(m.SubsystemLeadBits) > 0 {
				j.add("subsystem_lead_bits", m.SubsystemLeadBits)
			}
			j.addRaw("subsystem_data", oldLcHex(m.SubsystemData))
		} else {
			if m.Class != nil {
				j.add("class", m.Class.Name)
			}
			subs := []oldSubsystemState{}
			for _, s := range m.Subsystems {
				subs = append(subs, oldSubsystemState(s))
			}
			j.add("subsystems", subs)
		}
	}
	if f&StateWeapons != 0 {
		weps := m.Weapons
		if weps == nil {
			weps = []WeaponHealth{}
		}
		j.add("weapons", weps)
	}
	return j.done()
}

type oldSubsystemState SubsystemState

func (s oldSubsystemState) MarshalJSON() ([]byte, error) {
	var j oldLcJSON
	j.add("index", s.Index)
	if s.Name != "" {
		j.add("name", s.Name)
	}
	j.add("format", s.Format)
	j.add("condition", s.Condition)
	if len(s.Children) > 0 {
		type child struct {
			Name      string `json:"name,omitempty"`
			Condition uint8  `json:"condition"`
		}
		cs := make([]child, len(s.Children))
		for i, c := range s.Children {
			cs[i].Condition = c
			if i < len(s.ChildNames) {
				cs[i].Name = s.ChildNames[i]
			}
		}
		j.add("children", cs)
	}
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		j.add("has_power", s.HasPower)
		if s.HasPower {
			j.add("power", s.Power)
		}
		if s.Off {
			j.add("off", true)
		}
		if s.Format == SubsystemShield {
			fs := make([]int, len(s.Facings))
			for i, c := range s.Facings {
				fs[i] = int(c)
			}
			j.add("facings", fs)
		}
		if s.Extra != nil {
			j.addRaw("extra", oldLcHex(s.Extra))
		}
	case SubsystemPower:
		j.add("main_battery", s.MainBattery)
		j.add("backup_battery", s.BackupBattery)
	}
	return j.done()
}

type oldObjCreate ObjCreate

func (m oldObjCreate) MarshalJSON() ([]byte, error) {
	var j oldLcJSON
	j.add("owner", m.Owner)
	if m.HasTeam {
		j.add("team", m.Team)
	}
	j.add("class", oldObjectClass(m.Class))
	j.add("object", oldObjectID(m.Object))
	switch m.Class {
	case ClassShip:
		j.add("species", oldSpecies(m.Species))
		if spec := ShipBySpecies(m.Species); spec != nil {
			j.add("ship_class", spec.Name)
		}
		j.add("position", oldVec3(m.Position))
		j.add("orientation", oldQuaternion(m.Orientation))
		j.add("speed", oldLcFloat(m.Speed))
		j.addRaw("reserved", oldLcHex(m.Reserved[:]))
		j.add("player_name", m.PlayerName)
		j.add("set_name", m.SetName)
		if m.SubsystemData == nil && len(m.Subsystems) > 0 {
			ss := make([]oldSubsystemState, len(m.Subsystems))
			for i := range ss {
				ss[i] = oldSubsystemState(m.Subsystems[i])
			}
			j.add("subsystems", ss)
		} else {
			j.addRaw("subsystem_data", oldLcHex(m.SubsystemData))
			if m.SubsystemsNote != "" {
				j.add("subsystems_undecoded", m.SubsystemsNote)
			}
		}
	case ClassTorpedo:
		j.add("torpedo_type", oldTorpedoTypeIndex(m.TorpedoType))
	}
	return j.done()
}

type oldEvent Event

func (e oldEvent) MarshalJSON() ([]byte, error) {
	var j oldEvJSON
	e.jsonFields(&j)
	return j.done()
}

func (e *oldEvent) jsonFields(j *oldEvJSON) {
	j.add("class", oldEventClass(e.Class))
	j.add("code", oldEventCode(e.Code))
	j.add("source", oldObjectID(e.Source))
	j.add("dest", oldObjectID(e.Dest))
	switch e.Class {
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		j.add("value", e.Value)
	case EventClassObjPtr:
		j.add("obj_ptr", oldObjectID(e.ObjPtr))
	case EventClassObjectExploding:
		j.add("firing_player", e.FiringPlayer)
		j.add("lifetime", oldJSONF32(e.Lifetime))
	case EventClassCollision:
		j.add("contact_count", len(e.Contacts))
		j.add("contacts", oldContactsJSON(e.Contacts))
		j.add("force", oldJSONF32(e.Force))
	case EventClassStartFiring:
		j.add("firing_data", oldEvHex(e.FiringData[:]))
	case EventClassStartWarp:
		j.add("set_name", string(e.SetName))
		j.add("destination", oldVec3(e.Destination))
		j.add("speed", oldJSONF32(e.Speed))
	case EventClassBase, EventClassSubsystem:
	default:
		j.add("extra", oldEvHex(e.Extra))
	}
}

type oldEventForward EventForward

func (m oldEventForward) MarshalJSON() ([]byte, error) {
	var j oldEvJSON
	if m.Bare {
		j.add("bare", true)
		j.add("object", oldObjectID(m.Object))
		return j.done()
	}
	ev := oldEvent(m.Event)
	ev.jsonFields(&j)
	real := EventForward(m)
	j.add("receiver_code", oldEventCode(real.ReceiverCode()))
	if real.hasValue() {
		switch m.Op {
		case OpSetPhaserLevel:
			j.add("phaser_level", real.PhaserLevel().String())
		case OpTorpTypeChange:
			j.add("torpedo_type", oldTorpedoTypeIndex(real.TorpedoType()))
		}
	}
	return j.done()
}

type oldCollisionEffect CollisionEffect

func (m oldCollisionEffect) MarshalJSON() ([]byte, error) {
	var j oldEvJSON
	j.add("class", oldEventClass(m.Class))
	j.add("code", oldEventCode(m.Code))
	j.add("source", oldObjectID(m.Source))
	j.add("target", oldObjectID(m.Target))
	j.add("contact_count", len(m.Contacts))
	j.add("contacts", oldContactsJSON(m.Contacts))
	j.add("force", oldJSONF32(m.Force))
	return j.done()
}

type oldBeamFire BeamFire

func (m oldBeamFire) MarshalJSON() ([]byte, error) {
	var j oldEvJSON
	j.add("object", oldObjectID(m.Object))
	j.add("flags", m.Flags)
	j.add("direction", oldDir3(m.Direction))
	j.add("more_flags", uint8(m.MoreFlags))
	j.add("has_target", m.MoreFlags.HasTarget())
	if m.MoreFlags.HasTarget() {
		j.add("target", oldObjectID(m.Target))
	}
	return j.done()
}

type oldTorpedoFire TorpedoFire

func (m oldTorpedoFire) MarshalJSON() ([]byte, error) {
	var j oldEvJSON
	j.add("object", oldObjectID(m.Object))
	j.add("torpedo_type", oldTorpedoTypeIndex(m.Type))
	j.add("flags", uint8(m.Flags))
	j.add("has_target", m.Flags.HasTarget())
	j.add("velocity", oldDir3(m.Velocity))
	if m.Flags.HasTarget() {
		j.add("target", oldObjectID(m.Target))
		j.add("target_point", oldContactJSON{Dir: oldDir3(m.TargetPoint.Dir), Mag: m.TargetPoint.Mag,
			Point: oldVec3(m.TargetPoint.Vec())})
	}
	return j.done()
}

// The struct-tag messages whose fields include types with a MarshalJSON.

type oldSettings struct {
	GameTime           float32    `json:"game_time"`
	CollisionDamage    bool       `json:"collision_damage"`
	FriendlyFire       bool       `json:"friendly_fire"`
	PlayerSlot         uint8      `json:"player_slot"`
	Map                string     `json:"map"`
	ChecksumCorrection bool       `json:"checksum_correction"`
	CorrectionData     oldHexData `json:"correction_data,omitempty"`
}

type oldObjectOnly struct {
	Object oldObjectID `json:"object"`
}

type oldChecksumResponse struct {
	Round   ChecksumRound   `json:"round"`
	RefHash oldHash32       `json:"ref_hash,omitempty"`
	DirHash oldHash32       `json:"dir_hash"`
	Tree    oldChecksumTree `json:"tree"`
}

type oldChecksumTree struct {
	Files   []oldChecksumFile   `json:"files"`
	Subdirs []oldChecksumSubdir `json:"subdirs,omitempty"`
}

type oldChecksumFile struct {
	Name    oldHash32 `json:"name"`
	Content oldHash32 `json:"content"`
}

type oldChecksumSubdir struct {
	Name oldHash32       `json:"name"`
	Tree oldChecksumTree `json:"tree"`
}

// oldTree mirrors t, keeping nil slices nil (encoding/json writes a nil
// Files as null).
func oldTree(t *ChecksumTree) oldChecksumTree {
	var o oldChecksumTree
	if t.Files != nil {
		o.Files = make([]oldChecksumFile, len(t.Files))
		for i, f := range t.Files {
			o.Files[i] = oldChecksumFile{oldHash32(f.Name), oldHash32(f.Content)}
		}
	}
	if t.Subdirs != nil {
		o.Subdirs = make([]oldChecksumSubdir, len(t.Subdirs))
		for i := range t.Subdirs {
			o.Subdirs[i] = oldChecksumSubdir{oldHash32(t.Subdirs[i].Name), oldTree(&t.Subdirs[i].Tree)}
		}
	}
	return o
}
