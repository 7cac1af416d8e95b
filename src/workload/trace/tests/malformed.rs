//! Malformed traces: each must fail with an error at the right line (and column).

use std::io::Cursor;

use super::{read_all, read_err};
use crate::workload::trace::TraceReader;

/// A valid trace; the numbers are its line numbers, used by the tests below.
const GOOD: &str = "\
-kernel name = k
-grid dim = (1,1,1)
-block dim = (32,1,1)
-accelsim tracer version = 4

#BEGIN_TB
thread block = 0,0,0
warp = 0
insts = 2
0008 ffffffff 1 R1 MOV 0 0
0010 ffffffff 0 EXIT 0 0
#END_TB
";

/// `GOOD` with line `n` (1-based) replaced by `with` (`None` deletes it).
fn edit(n: usize, with: Option<&str>) -> String {
    let mut lines: Vec<&str> = GOOD.lines().collect();
    match with {
        Some(w) => lines[n - 1] = w,
        None => {
            lines.remove(n - 1);
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn the_base_trace_is_valid() {
    let (_, ctas) = read_all(GOOD).unwrap();
    assert_eq!(ctas[0].num_insts(), 2);
}

#[test]
fn truncated_instruction_line() {
    let e = read_err(&edit(11, Some("0010 ffffffff 0 EXIT 0")));
    assert_eq!((e.line, e.column), (11, 23));
    assert_eq!(
        e.to_string(),
        "t.traceg:11:23: truncated line: missing memory width"
    );

    let e = read_err(&edit(10, Some("0008 ffffffff 1")));
    assert_eq!((e.line, e.column), (10, 16));
    assert!(e.message.contains("destination register"), "{e}");

    let e = read_err(&edit(10, Some("0008 ffffffff 1 R1 LDG.E 1 R2 4 0 0x10")));
    assert_eq!(e.line, 10);
    assert!(
        e.message.contains("lane address"),
        "a full mask needs 32 addresses: {e}"
    );
}

#[test]
fn bad_hex() {
    let e = read_err(&edit(10, Some("00zz ffffffff 1 R1 MOV 0 0")));
    assert_eq!((e.line, e.column), (10, 1));
    assert!(e.message.contains("bad hex PC"), "{e}");

    let e = read_err(&edit(10, Some("0008 fffffffff 1 R1 MOV 0 0")));
    assert_eq!((e.line, e.column), (10, 6));
    assert!(e.message.contains("active mask"), "33-bit mask: {e}");

    let e = read_err(&edit(10, Some("0008 ffffffff 1 R1 LDG.E 1 R2 4 1 0xg0 4")));
    assert_eq!((e.line, e.column), (10, 35));
}

#[test]
fn bad_register_and_address_mode() {
    let e = read_err(&edit(10, Some("0008 ffffffff 1 X1 MOV 0 0")));
    assert_eq!((e.line, e.column), (10, 17));
    assert!(e.message.contains("bad destination register `X1`"), "{e}");

    let e = read_err(&edit(10, Some("0008 ffffffff 9 R1 MOV 0 0")));
    assert_eq!((e.line, e.column), (10, 15));

    let e = read_err(&edit(10, Some("0008 ffffffff 1 R2 LDG.E 1 R4 4 7 0x10")));
    assert_eq!((e.line, e.column), (10, 33));
    assert!(e.message.contains("unknown address mode `7`"), "{e}");

    let e = read_err(&edit(10, Some("0008 ffffffff 1 R1 MOV 0 0 12 13")));
    assert_eq!((e.line, e.column), (10, 31));
}

#[test]
fn missing_header_key() {
    // Without line 3 the header ends at `#BEGIN_TB`, now line 5.
    let e = read_err(&edit(3, None));
    assert_eq!((e.line, e.column), (5, 1));
    assert!(e.message.contains("-block dim"), "{e}");

    for (line, key) in [
        (1, "-kernel name"),
        (2, "-grid dim"),
        (4, "-accelsim tracer version"),
    ] {
        let e = read_err(&edit(line, None));
        assert_eq!(e.line, 5);
        assert!(e.message.contains(key), "{e}");
    }

    // An empty file is all header, and has none of the keys.
    let e = TraceReader::new(Cursor::new(&b""[..]), "empty.traceg")
        .err()
        .unwrap();
    assert_eq!((e.line, e.column), (1, 1));

    let e = read_err(&edit(4, Some("-accelsim tracer version = 6")));
    assert_eq!((e.line, e.column), (4, 28));
    assert!(e.message.contains("not supported"), "{e}");

    let e = read_err(&edit(3, Some("-block dim = (32,1)")));
    assert_eq!((e.line, e.column), (3, 14));
}

#[test]
fn instruction_count_mismatch() {
    // Fewer instructions than declared: found at `#END_TB`.
    let e = read_err(&edit(9, Some("insts = 3")));
    assert_eq!((e.line, e.column), (12, 1));
    assert!(e.message.contains("instruction count mismatch"), "{e}");
    assert!(e.message.contains("line 9"), "{e}");

    // More than declared: found at the first extra instruction.
    let e = read_err(&edit(9, Some("insts = 1")));
    assert_eq!(e.line, 11);
    assert!(e.message.contains("instruction count mismatch"), "{e}");

    // Fewer, found at the next warp.
    let text = GOOD.replace("insts = 2", "insts = 3").replace(
        "0010 ffffffff 0 EXIT 0 0\n",
        "0010 ffffffff 0 EXIT 0 0\nwarp = 1\n",
    );
    let text = text.replace("(32,1,1)", "(64,1,1)");
    let e = read_err(&text);
    assert_eq!(e.line, 12);
}

#[test]
fn missing_end_tb() {
    let e = read_err(&edit(12, None));
    assert_eq!((e.line, e.column), (12, 1), "just past the last line");
    assert!(
        e.message.contains("#END_TB") && e.message.contains("line 6"),
        "{e}"
    );

    // Without a final newline the end of file is the end of the last line.
    let e = read_err(edit(12, None).trim_end());
    assert_eq!((e.line, e.column), (11, 25));
}

#[test]
fn structure_errors() {
    let e = read_err(&edit(6, Some("thread block = 0,0,0")));
    assert_eq!(e.line, 6);
    assert!(e.message.contains("expected #BEGIN_TB"), "{e}");

    let e = read_err(&edit(7, Some("#BEGIN_TB")));
    assert_eq!(e.line, 7);

    let e = read_err(&edit(8, Some("warp = 1")));
    assert_eq!((e.line, e.column), (8, 8));
    assert!(e.message.contains("out of range"), "{e}");

    let e = read_err(&edit(7, Some("thread block = 0,1,0")));
    assert!(e.message.contains("outside the grid"), "{e}");

    let e = read_err(&edit(7, None));
    assert_eq!(e.line, 11);
    assert!(e.message.contains("thread block"), "{e}");

    let e = read_err(&edit(9, None));
    assert_eq!(e.line, 9);
    assert!(e.message.contains("before the `insts =` line"), "{e}");
}

#[test]
fn the_reader_stops_after_an_error() {
    let text = edit(10, Some("00zz ffffffff 1 R1 MOV 0 0")) + "#BEGIN_TB\n";
    let mut r = TraceReader::new(Cursor::new(text.as_bytes()), "t.traceg").unwrap();
    assert!(r.next_cta().unwrap().is_err());
    assert!(r.next_cta().is_none());
}

#[test]
fn bytes_that_are_not_text() {
    let mut bytes = GOOD.as_bytes().to_vec();
    let at = GOOD.find("MOV").unwrap();
    bytes[at] = 0xff;
    let e = TraceReader::new(Cursor::new(&bytes[..]), "t.traceg")
        .unwrap()
        .next_cta()
        .unwrap()
        .unwrap_err();
    assert_eq!((e.line, e.column), (10, 20));
    assert!(e.message.contains("UTF-8"), "{e}");

    let long = GOOD.replace(
        "0008 ffffffff 1 R1 MOV 0 0",
        &"7".repeat(crate::workload::trace::reader::MAX_LINE_BYTES + 10),
    );
    let e = read_err(&long);
    assert_eq!(e.line, 10);
    assert!(e.message.contains("longer than"), "{e}");
}
