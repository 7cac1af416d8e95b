//! Lockstep: the behavioural and RTL twins side by side, every output compared every cycle.

use std::fmt;

/// The first disagreement between the twins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub cycle: u64,
    pub sm: usize,
    pub block: &'static str,
    pub signal: String,
    pub expected: String,
    pub actual: String,
    /// The VCD written around the cycle, if any.
    pub vcd: Option<std::path::PathBuf>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lockstep mismatch at cycle {}, SM {}, block {}, signal {}: reference {}, RTL {}",
            self.cycle, self.sm, self.block, self.signal, self.expected, self.actual
        )?;
        if let Some(p) = &self.vcd {
            write!(f, " (waveform around it: {})", p.display())?;
        }
        Ok(())
    }
}
