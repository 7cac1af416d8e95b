//! Mutation fuzzing: a real trace with random single-character and single-line edits must
//! parse to `Ok` or `Err`, never panic.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{read_all, traces_dir};

/// xorshift64: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Characters that matter to the format, plus a few that never appear in it.
const ALPHABET: &[u8] = b"0123456789abcdefxX RZ.,=#-()\n\t_BEGIN_TB_END_\xc3";

/// One random edit of `text`: replace, insert or delete a character, or delete, duplicate or
/// swap a line.
fn mutate(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut t = text.to_vec();
    let at = rng.below(t.len());
    let ch = ALPHABET[rng.below(ALPHABET.len())];
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            t.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let line = |rng: &mut Rng| {
        let i = rng.below(line_starts.len() - 1);
        (line_starts[i], line_starts[i + 1])
    };
    match rng.below(6) {
        0 => t[at] = ch,
        1 => t.insert(at, ch),
        2 => {
            t.remove(at);
        }
        3 => {
            let (a, b) = line(rng);
            t.drain(a..b);
        }
        4 => {
            let (a, b) = line(rng);
            let copy = t[a..b].to_vec();
            t.splice(a..a, copy);
        }
        _ => {
            let (a, b) = line(rng);
            let (c, d) = line(rng);
            if b <= c {
                let (first, second) = (t[a..b].to_vec(), t[c..d].to_vec());
                t.splice(c..d, first);
                t.splice(a..b, second);
            }
        }
    }
    t
}

#[test]
fn mutated_traces_never_panic() {
    let mut outcomes = [0usize; 2];
    for (trace, seed) in [
        ("vectoradd-100-32-trace/kernel-1.traceg", 0x9e37_79b9_7f4a_7c15u64),
        (
            "simtune-ffmakernel-1-32-10/kernel-1-ctx_0x55e3a796e730.traceg",
            0x2545_f491_4f6c_dd1d,
        ),
    ] {
        let original =
            std::fs::read(traces_dir().join(trace)).expect("testbench/data/traces holds the real traces");
        let mut rng = Rng(seed);
        for round in 0..200 {
            // Mostly one edit, sometimes a few, so that errors deep in the file are reached too.
            let mut text = mutate(&original, &mut rng);
            for _ in 0..rng.below(3) {
                text = mutate(&text, &mut rng);
            }
            let result = catch_unwind(AssertUnwindSafe(|| {
                let s = String::from_utf8_lossy(&text);
                read_all(&s).map(|(_, ctas)| ctas.len())
            }));
            match result {
                Ok(Ok(_)) => outcomes[0] += 1,
                Ok(Err(e)) => {
                    assert!(e.line >= 1, "errors in a read file are positioned: {e}");
                    outcomes[1] += 1
                }
                Err(_) => panic!("{trace}: mutation round {round} panicked"),
            }
        }
    }
    println!("fuzz: {} parsed, {} rejected", outcomes[0], outcomes[1]);
    // Some edits are harmless (a blank line, a changed address), most are not.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}
