//! Opcode classification.

use crate::workload::trace::opcode::{is_tma, width_from_opcode};
use crate::workload::trace::{base_mnemonic, classify, OpClass};

#[test]
fn classes_of_sass_opcodes() {
    use OpClass::*;
    let cases = [
        ("LDG.E.64.SYS", LoadGlobal),
        ("LD.E", LoadGlobal),
        ("LDGSTS.E.BYPASS.LTC128B.128", LoadGlobal),
        ("STG.E.U8", StoreGlobal),
        ("ST.E.64", StoreGlobal),
        ("LDS.U.128", LoadShared),
        ("LDSM.16.M88.4", LoadShared),
        ("STS.128", StoreShared),
        ("LDL.64", LoadLocal),
        ("STL", StoreLocal),
        ("LDC.64", LoadConst),
        ("ULDC.64", LoadConst),
        ("ATOM.E.ADD.F32.FTZ.RN", Atomic),
        ("ATOMG.E.EXCH.STRONG.GPU", Atomic),
        ("ATOMS.POPC.INC", Atomic),
        ("RED.E.ADD.STRONG.GPU", Atomic),
        ("BAR.SYNC", Barrier),
        ("MEMBAR.CTA", MemBar),
        ("EXIT", Exit),
        ("BRA", Branch),
        ("BSSY", Branch),
        ("BSYNC", Branch),
        ("SSY", Branch),
        ("RET.REL.NODEC", Branch),
        ("CALL.ABS.NOINC", Branch),
        ("MUFU.RSQ", Sfu),
        ("RRO.SINCOS", Sfu),
        ("HMMA.16816.F32", Tensor),
        ("IMMA.8816.S8.S8", Tensor),
        ("DMMA.884", Tensor),
        ("HGMMA.64x128x16.F32", Tensor),
        ("IADD3", Alu),
        ("FFMA", Alu),
        ("FADD.FTZ", Alu),
        ("IMAD.WIDE.U32", Alu),
        ("ISETP.GE.AND", Alu),
        ("MOV", Alu),
        ("XMAD.PSL.CBCC", Alu),
        ("HFMA2.MMA", Alu),
        ("S2R", Alu),
        ("UIADD3", Alu),
        ("DFMA", Alu),
        ("NOP", Alu),
        ("FROBNICATE.X", Unknown),
        ("", Unknown),
    ];
    for (op, class) in cases {
        assert_eq!(classify(op), class, "{op}");
    }
    assert_eq!(base_mnemonic("LDG.E.64"), "LDG");
    assert_eq!(base_mnemonic("EXIT"), "EXIT");
}

#[test]
fn widths_and_tma() {
    assert_eq!(width_from_opcode("LDG.E.64"), 8);
    assert_eq!(width_from_opcode("LDG.E.128"), 16);
    assert_eq!(width_from_opcode("LDG.E.U16"), 2);
    assert_eq!(width_from_opcode("LDG.E"), 4);
    assert_eq!(
        width_from_opcode("LDG.E.99999999999999999999999"),
        u32::MAX,
        "saturates, no panic"
    );
    assert!(is_tma("UTMALDG.2D") && is_tma("UBLKCP.S.G") && !is_tma("LDG.E"));
}
