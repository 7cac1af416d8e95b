//! Hand-written traces for each variant of the line format: old tracer versions with leading
//! ids, lineinfo, the version-5 immediate, the three address modes and opcode widths.

use super::{header, read_all};
use crate::workload::trace::OpClass;

/// Lanes set in `mask`, in order.
fn lanes(mask: u32) -> Vec<u32> {
    (0..32).filter(|l| mask >> l & 1 == 1).collect()
}

/// One CTA holding one warp with `lines`.
fn one_warp(version: u32, lineinfo: bool, lines: &[&str]) -> String {
    let mut t = header(version, lineinfo, 1, 32);
    t += &format!(
        "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = {}\n",
        lines.len()
    );
    for l in lines {
        t += l;
        t.push('\n');
    }
    t + "#END_TB\n"
}

#[test]
fn version_2_lines_start_with_cta_and_warp_ids() {
    let mut t = header(2, false, 2, 64);
    t += "#BEGIN_TB\nthread block = 1,0,0\nwarp = 1\ninsts = 2\n\
          1 0 0 1 0008 ffffffff 1 R1 MOV 0 0\n\
          1 0 0 1 0010 0000ffff 1 R2 LDG.E.64 1 R4 8 1 0x1000 8\n#END_TB\n";
    let (r, ctas) = read_all(&t).unwrap();
    assert_eq!(ctas.len(), 1);
    let cta = &ctas[0];
    assert_eq!(cta.id, [1, 0, 0]);
    assert_eq!(cta.warps.len(), 2);
    assert!(cta.warps[0].is_empty());
    let [mov, ldg] = &cta.warps[1][..] else {
        panic!("two instructions")
    };
    assert_eq!(
        (mov.pc, mov.mask, mov.dst_regs(), mov.src_regs()),
        (0x8, u32::MAX, &[1u16][..], &[][..])
    );
    assert_eq!(r.opcode_name(mov.opcode), Some("MOV"));
    assert_eq!(mov.class, OpClass::Alu);
    assert!(!mov.is_mem() && mov.addrs.is_empty() && mov.imm.is_none());
    assert_eq!(r.opcode_name(ldg.opcode), Some("LDG.E.64"));
    assert_eq!(
        (ldg.class, ldg.mem_width, ldg.src_regs()),
        (OpClass::LoadGlobal, 8, &[4u16][..])
    );
    let want: Vec<u64> = (0..16).map(|k| 0x1000 + 8 * k).collect();
    assert_eq!(ldg.addrs, want);
}

#[test]
fn lineinfo_puts_a_source_line_first() {
    let t = one_warp(
        4,
        true,
        &[
            "17 0008 ffffffff 0 NOP 0 0",
            "18 0010 00000001 1 R3 LDS.U.128 1 R2 16 1 0x40 0",
        ],
    );
    let (_, ctas) = read_all(&t).unwrap();
    let w = &ctas[0].warps[0];
    assert_eq!(w[0].line_num, Some(17));
    assert_eq!(w[1].line_num, Some(18));
    assert_eq!(
        (w[1].class, w[1].mem_width, &w[1].addrs[..]),
        (OpClass::LoadShared, 16, &[0x40u64][..])
    );

    // Both prefixes together: the ids come before the line number.
    let mut t = header(1, true, 1, 32);
    t += "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0 0 0 0 99 0020 ffffffff 0 EXIT 0 0\n#END_TB\n";
    let (_, ctas) = read_all(&t).unwrap();
    let exit = &ctas[0].warps[0][0];
    assert_eq!(
        (exit.line_num, exit.pc, exit.class),
        (Some(99), 0x20, OpClass::Exit)
    );
}

#[test]
fn version_5_ends_each_line_with_an_immediate() {
    let t = one_warp(
        5,
        false,
        &[
            "0060 ffffffff 1 R0 MOV 0 0 1073742663",
            "0070 ffffffff 0 DEPBAR 0 0 -1",
            "0080 00000003 1 R2 LDG.E 1 R4 4 0 0x10 0x20 5",
            "0090 ffffffff 1 R3 FFMA 2 R3 R0 0 0",
        ],
    );
    let (_, ctas) = read_all(&t).unwrap();
    let w = &ctas[0].warps[0];
    assert_eq!(w[0].imm, Some(1073742663));
    assert_eq!(w[1].imm, Some(-1));
    assert_eq!((&w[2].addrs[..], w[2].imm), (&[0x10u64, 0x20][..], Some(5)));
    assert_eq!((w[3].src_regs(), w[3].imm), (&[3u16, 0][..], Some(0)));

    // Version 4 may omit it, and mostly does.
    let (_, ctas) = read_all(&one_warp(4, false, &["0008 ffffffff 1 R1 MOV 0 0"])).unwrap();
    assert_eq!(ctas[0].warps[0][0].imm, None);
}

#[test]
fn address_modes_decode_to_per_lane_addresses() {
    let cases: [(&str, u32, Vec<u64>); 7] = [
        // mode 0: every active lane listed (lanes 0, 2, 3)
        (
            "0010 0000000d 1 R2 LDG.E 1 R4 4 0 0x100 0x200 0x300",
            0xd,
            vec![0x100, 0x200, 0x300],
        ),
        // mode 1: base + stride over contiguous active lanes 4..=7
        (
            "0018 000000f0 0 STG.E 2 R4 R6 4 1 0x1000 8",
            0xf0,
            vec![0x1000, 0x1008, 0x1010, 0x1018],
        ),
        // mode 1 with a negative stride
        (
            "0020 00000003 1 R2 LDG.E 1 R4 4 1 0x100 -4",
            0x3,
            vec![0x100, 0xfc],
        ),
        // mode 2: base, then a delta per further active lane (lanes 0, 3, 8)
        (
            "0028 00000109 1 R2 LDG.E 1 R4 4 2 0x2000 4 -8",
            0x109,
            vec![0x2000, 0x2004, 0x1ffc],
        ),
        // mode 2, one active lane: no deltas
        ("0030 80000000 1 R2 LDG.E 1 R4 4 2 0x40", 0x8000_0000, vec![0x40]),
        // no active lane: nothing to decode
        ("0038 00000000 0 STG.E 2 R4 R6 4 1 0x0 0", 0, vec![]),
        // full warp, mode 1
        (
            "0040 ffffffff 1 R2 LDG.E 1 R4 4 1 0x7f2b2d500000 4",
            u32::MAX,
            (0..32).map(|k| 0x7f2b2d500000 + 4 * k).collect(),
        ),
    ];
    let lines: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let (_, ctas) = read_all(&one_warp(4, false, &lines)).unwrap();
    for (inst, (line, mask, want)) in ctas[0].warps[0].iter().zip(&cases) {
        assert_eq!(inst.mask, *mask, "{line}");
        assert_eq!(inst.addrs, *want, "{line}");
        assert_eq!(
            inst.addrs.len(),
            lanes(*mask).len(),
            "one address per active lane: {line}"
        );
        assert!(inst.is_mem());
    }
}

#[test]
fn memory_width_comes_from_the_opcode() {
    let cases = [
        ("LDG.E.64", 8),
        ("LDS.U.128", 16),
        ("STG.E.128", 16),
        ("STG.E.U8", 1),
        ("STG.E.U16", 2),
        ("LDG.E", 4),
        ("LDG.E.CG", 4),
        ("LDG.E.S16", 2),
        ("ATOMG.E.ADD.F64.RN.STRONG.GPU", 8),
        ("LDSM.16.M88.4", 2),
    ];
    let lines: Vec<String> = cases
        .iter()
        .map(|(op, _)| format!("0010 00000001 1 R2 {op} 1 R4 4 1 0x100 0"))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let text = one_warp(4, false, &lines);
    let (r, ctas) = read_all(&text).unwrap();
    for (inst, (op, width)) in ctas[0].warps[0].iter().zip(cases) {
        assert_eq!(r.opcode_name(inst.opcode), Some(op));
        assert_eq!(inst.mem_width, width, "{op}");
    }
    // The trace's own width field only says whether the line has addresses.
    let (_, ctas) = read_all(&one_warp(
        4,
        false,
        &["0010 00000001 1 R2 LDG.E.64 1 R4 4 1 0x100 0"],
    ))
    .unwrap();
    assert_eq!(ctas[0].warps[0][0].mem_width, 8);
}

#[test]
fn tma_lines_list_transfers() {
    let t = one_warp(
        5,
        false,
        &[
            "0010 00000001 0 UTMALDG.2D 2 R2 R4 16 3 2 0x1000 0x2000 0",
            "0020 00000001 0 UBLKCP.S.G 1 R2 16 4 0x100 3 64 64 0",
        ],
    );
    let (_, ctas) = read_all(&t).unwrap();
    let w = &ctas[0].warps[0];
    assert_eq!(
        (w[0].class, &w[0].addrs[..], w[0].mem_width),
        (OpClass::LoadGlobal, &[0x1000u64, 0x2000][..], 16)
    );
    assert_eq!(w[1].addrs, vec![0x100, 0x140, 0x180]);
}

#[test]
fn unknown_keys_and_opcodes_are_kept_not_fatal() {
    let mut t = header(4, false, 1, 32).replace("\n\n", "\n-future key = 42\n\n");
    t += "#BEGIN_TB\nthread block = 0,0,0\ncluster id = 0,0,0\ncluster rank = 0\nwarp = 0\ninsts = 3\n\
          0008 ffffffff 0 FOOBAR.X 0 0\n0010 ffffffff 0 FOOBAR.Y 0 0\n0018 ffffffff 0 FOOBAR.X 0 0\n#END_TB\n";
    let (r, ctas) = read_all(&t).unwrap();
    assert_eq!(
        r.header().other,
        vec![("future key".to_string(), "42".to_string())]
    );
    assert_eq!(
        ctas[0].other,
        vec![
            ("cluster id".to_string(), "0,0,0".to_string()),
            ("cluster rank".to_string(), "0".to_string())
        ]
    );
    let w = &ctas[0].warps[0];
    assert!(w.iter().all(|i| i.class == OpClass::Alu));
    assert_eq!(r.opcodes().class(w[0].opcode), Some(OpClass::Unknown));
    assert_eq!(r.unknown_opcodes(), vec![("FOOBAR".to_string(), 3)]);
}

#[test]
fn header_fields_are_parsed() {
    let t = "-kernel name = _Z8mult_gpuIfEvPT_S1_S1_ii\n-kernel id = 3\n-grid dim = (4,2,1)\n\
             -block dim = (32,32,1)\n-shmem = 8192\n-nregs = 30\n-binary version = 61\n-cuda stream id = 0\n\
             -shmem base_addr = 0x00007fb05c000000\n-local mem base_addr = 0x00007fb05a000000\n\
             -nvbit version = 1.5.5\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n\
             #traces format = [line_num] PC mask ...\n";
    let (r, ctas) = read_all(t).unwrap();
    let h = r.header();
    assert!(ctas.is_empty());
    assert_eq!(h.kernel_name, "_Z8mult_gpuIfEvPT_S1_S1_ii");
    assert_eq!(
        (h.kernel_id, h.grid_dim, h.block_dim),
        (Some(3), [4, 2, 1], [32, 32, 1])
    );
    assert_eq!(
        (h.shmem, h.nregs, h.binary_version, h.cuda_stream_id),
        (Some(8192), Some(30), Some(61), Some(0))
    );
    assert_eq!(
        (h.shmem_base_addr, h.local_mem_base_addr),
        (Some(0x7fb05c000000), Some(0x7fb05a000000))
    );
    assert_eq!(
        (h.nvbit_version.as_deref(), h.tracer_version, h.lineinfo),
        (Some("1.5.5"), 4, false)
    );
    assert_eq!((h.warps_per_cta(), h.num_ctas()), (32, 8));
    assert!(h.other.is_empty());
}
