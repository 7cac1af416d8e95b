//! VCD waveforms, written streaming with the `vcd` crate, one time unit (1 ns) per core
//! cycle, to a temporary file renamed into place when complete.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use vcd::{IdCode, Value};

pub type VcdWriter = vcd::Writer<BufWriter<File>>;

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes a whole VCD through `f`, atomically.
pub fn write_atomic_vcd(
    path: &Path,
    f: impl FnOnce(&mut VcdWriter) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let mut w = vcd::Writer::new(BufWriter::new(File::create(&tmp)?));
    let result = f(&mut w).and_then(|_| w.flush());
    drop(w);
    match result {
        Ok(()) => std::fs::rename(&tmp, path),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes `value` (of `width` bits) for `id`.
pub fn change(w: &mut VcdWriter, id: IdCode, width: u32, value: u64) -> std::io::Result<()> {
    if width == 1 {
        w.change_scalar(id, if value & 1 == 1 { Value::V1 } else { Value::V0 })
    } else {
        w.change_vector(
            id,
            (0..width)
                .rev()
                .map(|b| if value >> b & 1 == 1 { Value::V1 } else { Value::V0 }),
        )
    }
}
