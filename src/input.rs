//! Whole-file inputs read with a size cap: a `.kern` kernel, a TOML configuration or a
//! GPGPU-Sim `gpgpusim.config`. Past the cap the read stops with an error naming the file,
//! so that `-k /dev/zero`, a FIFO or a huge file ends at once instead of filling memory or
//! never ending. (Accel-Sim traces are streamed instead; their reader caps one line.)

use std::io::Read;
use std::path::Path;

/// Largest `.kern` kernel file read (real kernels are a few KiB).
pub const MAX_KERNEL_BYTES: u64 = 16 << 20;
/// Longest trace line accepted. Real lines are under 1 KiB (32 addresses); the cap keeps a
/// corrupt or binary file from being read into memory as one "line".
pub const MAX_TRACE_LINE_BYTES: usize = 1 << 20;
/// Largest configuration file read, TOML or `gpgpusim.config` (real ones are under 100 KiB).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;
/// Largest Accel-Sim `kernelslist.g` read (one line per launch; Rodinia's are a few KiB).
pub const MAX_LIST_BYTES: u64 = 16 << 20;

/// Why a capped whole-file read failed; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {what} is larger than {} (the cap on a {what}); is it the right file?", human_bytes(*.max_bytes))]
    TooLarge {
        path: String,
        what: String,
        max_bytes: u64,
    },
    #[error("{path}:{line}:{column}: {what} is not UTF-8 text")]
    NotUtf8 {
        path: String,
        what: String,
        line: usize,
        column: usize,
    },
}

/// `16 MiB`, `1 KiB`, `100 bytes`.
pub fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// Reads the text file at `path`, refusing one larger than `max_bytes`. `what` names the
/// kind of file in errors ("kernel file"). At most `max_bytes + 1` bytes are ever read.
pub fn read_text_capped(path: &Path, max_bytes: u64, what: &str) -> Result<String, InputError> {
    let name = || path.display().to_string();
    let io = |source| InputError::Io { path: name(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(InputError::TooLarge {
            path: name(),
            what: what.to_string(),
            max_bytes,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // Valid up to here, so these slices are UTF-8.
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        InputError::NotUtf8 {
            path: name(),
            what: what.to_string(),
            line: valid.iter().filter(|&&b| b == b'\n').count() + 1,
            column: String::from_utf8_lossy(&valid[line_start..]).chars().count() + 1,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_naming_it() {
        let e = read_text_capped(Path::new("/dev/zero"), 1 << 10, "kernel file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: kernel file is larger than 1 KiB (the cap on a kernel file); is it the right file?"
        );
    }

    #[test]
    fn a_file_at_the_cap_is_read_and_bad_utf8_is_positioned() {
        let dir = std::env::temp_dir().join(format!("mascar-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("k.kern");
        std::fs::write(&p, "abcd").unwrap();
        assert_eq!(read_text_capped(&p, 4, "kernel file").unwrap(), "abcd");
        assert!(read_text_capped(&p, 3, "kernel file").is_err());
        std::fs::write(&p, b"ab\ncd\xffe").unwrap();
        let e = read_text_capped(&p, 100, "kernel file").unwrap_err();
        assert!(
            e.to_string()
                .ends_with("k.kern:2:3: kernel file is not UTF-8 text"),
            "{e}"
        );
        let e = read_text_capped(&dir.join("absent"), 100, "kernel file").unwrap_err();
        assert!(e.to_string().starts_with("cannot read "), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
