//! The one error type of the trace reader: a message positioned in a file.

use thiserror::Error;

/// A trace or kernelslist failure, positioned at the offending token.
///
/// Displays as `file:line:column: message`, the form editors and terminals jump to.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct TraceError {
    /// The file name given to the reader (the path, for files it opened itself).
    pub file: String,
    /// 1-based line; 0 when the failure is not tied to a line (the file could not be opened).
    pub line: usize,
    /// 1-based column, in characters; 0 when the failure is not tied to a line.
    pub column: usize,
    /// What went wrong, in words.
    pub message: String,
}

impl TraceError {
    pub(crate) fn new(file: &str, line: usize, column: usize, message: impl Into<String>) -> Self {
        TraceError {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    /// A failure to open or read a whole file, not tied to a position in it.
    pub(crate) fn unpositioned(file: &str, message: impl Into<String>) -> Self {
        Self::new(file, 0, 0, message)
    }
}
