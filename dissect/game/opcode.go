package game

// Opcode is the first byte of a game message (the payload of a type 0x32
// transport message). Values below MaxMessageTypes (0x2B) are the engine's
// own opcodes; script messages sent by Python (SendTGMessage) use 0x2B and
// up, and any byte there that stock scripts do not define is a mod's.
type Opcode uint8

// MaxMessageTypes is the engine's MAX_MESSAGE_TYPES: the first byte that
// belongs to script messages.
const MaxMessageTypes Opcode = 0x2B

// The opcode table of seeds/001 ("Summary: Opcode Table"), with the script
// message numbers PROTOCOL.md confirms.
const (
	OpSettings           Opcode = 0x00
	OpGameInit           Opcode = 0x01
	OpObjCreate          Opcode = 0x02
	OpObjCreateTeam      Opcode = 0x03
	OpDead04             Opcode = 0x04
	OpDead05             Opcode = 0x05
	OpPythonEvent        Opcode = 0x06
	OpStartFiring        Opcode = 0x07
	OpStopFiring         Opcode = 0x08
	OpStopFiringAtTarget Opcode = 0x09
	OpSubsystemStatus    Opcode = 0x0A
	OpAddToRepairList    Opcode = 0x0B
	OpClientEvent        Opcode = 0x0C
	OpPythonEvent2       Opcode = 0x0D
	OpStartCloaking      Opcode = 0x0E
	OpStopCloaking       Opcode = 0x0F
	OpStartWarp          Opcode = 0x10
	OpRepairListPriority Opcode = 0x11
	OpSetPhaserLevel     Opcode = 0x12
	OpHostMsg            Opcode = 0x13
	OpDestroyObject      Opcode = 0x14
	OpCollisionEffect    Opcode = 0x15
	OpUICollision        Opcode = 0x16
	OpDeletePlayerUI     Opcode = 0x17
	OpDeletePlayerAnim   Opcode = 0x18
	OpTorpedoFire        Opcode = 0x19
	OpBeamFire           Opcode = 0x1A
	OpTorpTypeChange     Opcode = 0x1B
	OpStateUpdate        Opcode = 0x1C
	OpObjNotFound        Opcode = 0x1D
	OpRequestObject      Opcode = 0x1E
	OpEnterSet           Opcode = 0x1F
	OpChecksumRequest    Opcode = 0x20
	OpChecksumResponse   Opcode = 0x21
	OpVersionMismatch    Opcode = 0x22
	OpSystemChecksumFail Opcode = 0x23
	OpUnused24           Opcode = 0x24
	OpFileTransfer       Opcode = 0x25
	OpUnused26           Opcode = 0x26
	OpFileTransferACK    Opcode = 0x27
	OpChecksumComplete   Opcode = 0x28
	OpExplosion          Opcode = 0x29
	OpNewPlayerInGame    Opcode = 0x2A

	OpChat        Opcode = 0x2C
	OpTeamChat    Opcode = 0x2D
	OpMissionInit Opcode = 0x35
	OpScoreChange Opcode = 0x36
	OpScore       Opcode = 0x37
	OpEndGame     Opcode = 0x38
	OpRestartGame Opcode = 0x39
	OpScoreInit   Opcode = 0x3F
	OpTeamScore   Opcode = 0x40
	OpTeamMessage Opcode = 0x41
)

var opcodeNames = map[Opcode]string{
	OpSettings: "Settings", OpGameInit: "GameInit", OpObjCreate: "ObjCreate",
	OpObjCreateTeam: "ObjCreateTeam", OpDead04: "dead(0x04)", OpDead05: "dead(0x05)",
	OpPythonEvent: "PythonEvent", OpStartFiring: "StartFiring", OpStopFiring: "StopFiring",
	OpStopFiringAtTarget: "StopFiringAtTarget", OpSubsystemStatus: "SubsystemStatus",
	OpAddToRepairList: "AddToRepairList", OpClientEvent: "ClientEvent", OpPythonEvent2: "PythonEvent2",
	OpStartCloaking: "StartCloaking", OpStopCloaking: "StopCloaking", OpStartWarp: "StartWarp",
	OpRepairListPriority: "RepairListPriority", OpSetPhaserLevel: "SetPhaserLevel",
	OpHostMsg: "HostMsg", OpDestroyObject: "DestroyObject", OpCollisionEffect: "CollisionEffect",
	OpUICollision: "UICollisionSetting", OpDeletePlayerUI: "DeletePlayerUI",
	OpDeletePlayerAnim: "DeletePlayerAnim", OpTorpedoFire: "TorpedoFire", OpBeamFire: "BeamFire",
	OpTorpTypeChange: "TorpedoTypeChange", OpStateUpdate: "StateUpdate", OpObjNotFound: "ObjNotFound",
	OpRequestObject: "RequestObject", OpEnterSet: "EnterSet", OpChecksumRequest: "ChecksumRequest",
	OpChecksumResponse: "ChecksumResponse", OpVersionMismatch: "VersionMismatch",
	OpSystemChecksumFail: "SystemChecksumFail", OpUnused24: "unused(0x24)", OpFileTransfer: "FileTransfer",
	OpUnused26: "unused(0x26)", OpFileTransferACK: "FileTransferACK", OpChecksumComplete: "ChecksumComplete",
	OpExplosion: "Explosion", OpNewPlayerInGame: "NewPlayerInGame",
	OpChat: "CHAT", OpTeamChat: "TEAM_CHAT", OpMissionInit: "MISSION_INIT", OpScoreChange: "SCORE_CHANGE",
	OpScore: "SCORE", OpEndGame: "END_GAME", OpRestartGame: "RESTART_GAME", OpScoreInit: "SCORE_INIT",
	OpTeamScore: "TEAM_SCORE", OpTeamMessage: "TEAM_MESSAGE",
}

// String names the opcode; bytes no stock code defines are custom(0xNN) at
// or above MaxMessageTypes and unknown(0xNN) below it. The names are made
// once (opcodeText): decode names the opcode of every game message it
// prints, where the map lookup was a twentieth of its formatting.
func (o Opcode) String() string { return opcodeText[o] }

// opcodeText (tables_gen.go) holds the String form of every opcode byte:
// its name in opcodeNames, else custom(0xNN) from MaxMessageTypes on and
// unknown(0xNN) below.

// IsScript reports whether o is a script message (sent from Python).
func (o Opcode) IsScript() bool { return o >= MaxMessageTypes }
