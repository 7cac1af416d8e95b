//! SASS opcodes: which pipeline each goes to ([`OpClass`], [`classify`]), how many bytes a
//! memory opcode moves per lane, and the per-reader table that interns opcode names.
//!
//! The mnemonic lists follow Accel-Sim's ISA tables for Maxwell/Pascal (sm_50/sm_6x) through
//! Volta, Turing, Ampere and Hopper (sm_90), with one difference on purpose: constant loads
//! (`LDC`, `ULDC`) get their own class, where Accel-Sim runs them as plain ALU work.

use std::collections::{BTreeMap, HashMap};

/// The execution pipeline (and memory space, for memory instructions) of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// Global or generic load: `LDG`, `LD`, `LDGSTS`, and the Hopper bulk/TMA loads and prefetches.
    LoadGlobal,
    /// Global or generic store: `STG`, `ST`, `UTMASTG`.
    StoreGlobal,
    /// Shared-memory load: `LDS`, `LDSM`.
    LoadShared,
    /// Shared-memory store: `STS`, `STSM`.
    StoreShared,
    /// Local-memory load: `LDL`.
    LoadLocal,
    /// Local-memory store: `STL`.
    StoreLocal,
    /// Constant-bank load: `LDC`, `ULDC`.
    LoadConst,
    /// Atomics and reductions, global or shared: `ATOM`, `ATOMG`, `ATOMS`, `RED`, ...
    Atomic,
    /// CTA-wide barrier: `BAR` (and the Hopper cluster barrier `UCGABAR_*`).
    Barrier,
    /// Memory fence: `MEMBAR`, `FENCE`.
    MemBar,
    /// Thread exit: `EXIT`.
    Exit,
    /// Control flow and convergence: `BRA`, `BSSY`, `BSYNC`, `SSY`, `SYNC`, `CALL`, `RET`, ...
    Branch,
    /// Special-function unit: `MUFU`, `RRO`.
    Sfu,
    /// Tensor cores: `HMMA`, `IMMA`, `DMMA`, `BMMA` and the Hopper warpgroup `*GMMA`.
    Tensor,
    /// Integer, floating-point, conversion, move, predicate, uniform-datapath and other
    /// single-issue ALU work.
    Alu,
    /// Not in the tables. [`classify`] returns it; the reader runs such instructions as
    /// [`OpClass::Alu`] and counts them (see `TraceReader::unknown_opcodes`).
    Unknown,
}

/// The mnemonic before the first `.`: `LDG` for `LDG.E.64.SYS`.
pub fn base_mnemonic(opcode: &str) -> &str {
    opcode.split('.').next().unwrap_or(opcode)
}

/// The pipeline of a SASS opcode (sm_50 … sm_90), from its base mnemonic.
pub fn classify(opcode: &str) -> OpClass {
    use OpClass::*;
    match base_mnemonic(opcode) {
        "LDG" | "LD" | "LDGSTS" | "UTMALDG" | "UTMAPF" | "UBLKCP" | "UBLKPF" => LoadGlobal,
        "STG" | "ST" | "UTMASTG" => StoreGlobal,
        "LDS" | "LDSM" => LoadShared,
        "STS" | "STSM" => StoreShared,
        "LDL" => LoadLocal,
        "STL" => StoreLocal,
        "LDC" | "ULDC" => LoadConst,
        "ATOM" | "ATOMG" | "ATOMS" | "RED" | "REDG" | "REDAS" | "UTMAREDG" | "UBLKRED" => Atomic,
        "BAR" | "UCGABAR_ARV" | "UCGABAR_WAIT" => Barrier,
        "MEMBAR" | "FENCE" => MemBar,
        "EXIT" => Exit,
        "BRA" | "BRX" | "BRXU" | "JMP" | "JMX" | "JMXU" | "BSSY" | "BSYNC" | "SSY" | "SYNC" | "CALL"
        | "CAL" | "JCAL" | "RET" | "PRET" | "BRK" | "PBK" | "CONT" | "PCNT" | "PEXIT" | "BREAK" | "BMOV"
        | "BPT" | "RTT" | "WARPSYNC" | "YIELD" | "NANOSLEEP" | "KILL" | "RPCMOV" => Branch,
        "MUFU" | "RRO" => Sfu,
        "HMMA" | "IMMA" | "DMMA" | "BMMA" | "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA" => Tensor,
        m if is_alu(m) => Alu,
        _ => Unknown,
    }
}

/// Mnemonics that run on the ALU pipelines (FP32, FP16, FP64, integer, conversion, moves,
/// predicates, uniform datapath, and the texture/surface/misc ops Accel-Sim also runs as ALU).
fn is_alu(m: &str) -> bool {
    matches!(
        m,
        // FP32
        "FADD" | "FADD32I" | "FCHK" | "FFMA" | "FFMA32I" | "FMNMX" | "FMUL" | "FMUL32I" | "FSEL" | "FSET"
        | "FSETP" | "FSWZADD" | "FCMP"
        // FP16
        | "HADD2" | "HADD2_32I" | "HFMA2" | "HFMA2_32I" | "HMUL2" | "HMUL2_32I" | "HSET2" | "HSETP2"
        | "HMNMX2"
        // FP64
        | "DADD" | "DFMA" | "DMUL" | "DSETP" | "DMNMX" | "DSET"
        // integer
        | "BMSK" | "BREV" | "FLO" | "IABS" | "IADD" | "IADD3" | "IADD32I" | "IDP" | "IDP4A" | "IMAD"
        | "IMADSP" | "IMNMX" | "IMUL" | "IMUL32I" | "ISCADD" | "ISCADD32I" | "ISETP" | "ISET" | "LEA"
        | "LOP" | "LOP3" | "LOP32I" | "POPC" | "SHF" | "SHL" | "SHR" | "VABSDIFF" | "VABSDIFF4" | "VADD"
        | "VMNMX" | "BFE" | "BFI" | "ICMP" | "XMAD" | "VIADD" | "VIADDMNMX" | "VIMNMX" | "VIMNMX3"
        // conversion
        | "F2F" | "F2FP" | "F2I" | "I2F" | "I2I" | "I2IP" | "I2FP" | "F2IP" | "FRND"
        // movement and predicates
        | "MOV" | "MOV32I" | "MOVM" | "PRMT" | "SEL" | "SGXT" | "SHFL" | "PLOP3" | "PSETP" | "P2R"
        | "R2P" | "CSET" | "CSETP" | "PSET"
        // memory-adjacent work Accel-Sim issues as ALU (cache control, async-copy and
        // mbarrier bookkeeping, scoreboard waits)
        | "MATCH" | "QSPC" | "CCTL" | "CCTLL" | "CCTLT" | "ERRBAR" | "CGAERRBAR" | "LDGDEPBAR"
        | "DEPBAR" | "ARRIVES" | "SYNCS" | "UTMACCTL" | "UTMACMDFLUSH" | "WARPGROUP"
        // uniform datapath
        | "R2UR" | "REDUX" | "S2UR" | "UBMSK" | "UBREV" | "UCLEA" | "UF2FP" | "UFLO" | "UIADD3"
        | "UIMAD" | "UISETP" | "ULEA" | "ULOP" | "ULOP3" | "ULOP32I" | "UMOV" | "UP2UR" | "UPLOP3"
        | "UPOPC" | "UPRMT" | "UPSETP" | "UR2UP" | "USEL" | "USGXT" | "USHF" | "USHL" | "USHR" | "VOTEU"
        // texture and surface (no per-lane addresses in the traces)
        | "TEX" | "TLD" | "TLD4" | "TMML" | "TXD" | "TXQ" | "TEXS" | "TLD4S" | "TLDS" | "SUATOM"
        | "SULD" | "SUQUERY" | "SURED" | "SUST"
        // miscellaneous
        | "B2R" | "R2B" | "CS2R" | "CSMTEST" | "GETLMEMBASE" | "SETLMEMBASE" | "LEPC" | "NOP"
        | "PMTRIG" | "S2R" | "SETCTAID" | "VOTE" | "VOTE_VTG" | "USETMAXREG" | "ELECT"
    )
}

/// Bytes per lane moved by a memory opcode, read from its modifiers as Accel-Sim does (the
/// tracer's own width field is not trusted): the first `.N`, `.UN` modifier gives N bits;
/// otherwise 4 bytes. `LDG.E.64` → 8, `LDS.U.128` → 16, `STG.E.U8` → 1, `LDG.E` → 4.
///
/// Deliberate difference: `.SN` and `.FN` (`LDG.E.S16`, `ATOMG.E.ADD.F64`) also give N bits,
/// where Accel-Sim falls back to 4 bytes for them.
pub(crate) fn width_from_opcode(opcode: &str) -> u32 {
    for token in opcode.split('.').skip(1) {
        let digits = match token.as_bytes().first() {
            Some(b'U' | b'S' | b'F') => &token[1..],
            _ => token,
        };
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let bits: u64 = digits.parse().unwrap_or(u64::MAX);
            return u32::try_from(bits / 8).unwrap_or(u32::MAX);
        }
    }
    4
}

/// Hopper bulk-copy / TMA opcodes, whose address list is per transfer, not per lane.
pub(crate) fn is_tma(opcode: &str) -> bool {
    matches!(
        base_mnemonic(opcode),
        "UTMALDG" | "UTMASTG" | "UTMAPF" | "UTMAREDG" | "UBLKCP" | "UBLKPF" | "UBLKRED"
    )
}

/// What the reader needs to know about one interned opcode, worked out once per name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpcodeInfo {
    /// The class given to instructions (Unknown already mapped to Alu).
    pub class: OpClass,
    pub unknown: bool,
    pub width: u32,
    pub tma: bool,
}

/// Interned opcode names of one trace: instructions store a `u16` index into it.
#[derive(Debug, Default)]
pub struct OpcodeTable {
    names: Vec<String>,
    info: Vec<OpcodeInfo>,
    /// Instructions seen per opcode whose mnemonic is unknown (0 for known ones).
    unknown_hits: Vec<u64>,
    index: HashMap<String, u16>,
}

impl OpcodeTable {
    /// The id of `name`, adding it if new; `None` once 65536 distinct names are taken.
    pub(crate) fn intern(&mut self, name: &str) -> Option<(u16, OpcodeInfo)> {
        if let Some(&id) = self.index.get(name) {
            return Some((id, self.info[usize::from(id)]));
        }
        let id = u16::try_from(self.names.len()).ok()?;
        let class = classify(name);
        let unknown = class == OpClass::Unknown;
        let info = OpcodeInfo {
            class: if unknown { OpClass::Alu } else { class },
            unknown,
            width: width_from_opcode(name),
            tma: is_tma(name),
        };
        self.names.push(name.to_string());
        self.info.push(info);
        self.unknown_hits.push(0);
        self.index.insert(name.to_string(), id);
        Some((id, info))
    }

    /// Counts one parsed instruction of opcode `id` (only unknown opcodes are tallied).
    pub(crate) fn record(&mut self, id: u16) {
        let i = usize::from(id);
        if self.info.get(i).is_some_and(|info| info.unknown) {
            self.unknown_hits[i] += 1;
        }
    }

    /// The full opcode text (`LDG.E.64`) of an id handed out by this table.
    pub fn name(&self, id: u16) -> Option<&str> {
        self.names.get(usize::from(id)).map(String::as_str)
    }

    /// The class [`classify`] gives the opcode (so [`OpClass::Unknown`] for unknown ones).
    pub fn class(&self, id: u16) -> Option<OpClass> {
        let info = self.info.get(usize::from(id))?;
        Some(if info.unknown {
            OpClass::Unknown
        } else {
            info.class
        })
    }

    /// Number of distinct opcodes seen so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no opcode has been seen yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Unknown base mnemonics and how many instructions used them, sorted by mnemonic.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        let mut by_mnemonic: BTreeMap<&str, u64> = BTreeMap::new();
        for (name, &hits) in self.names.iter().zip(&self.unknown_hits) {
            if hits > 0 {
                *by_mnemonic.entry(base_mnemonic(name)).or_default() += hits;
            }
        }
        by_mnemonic.into_iter().map(|(m, n)| (m.to_string(), n)).collect()
    }
}
