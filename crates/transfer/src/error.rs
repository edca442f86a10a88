//! How a transfer job can end other than with every byte sent.
use std::fmt;

/// The outcome of a failed job (or a refused submission). Per job, never a panic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransferError {
    /// The peer closed or reset the connection (EPIPE, ECONNRESET, ENOTCONN); the errno.
    PeerClosed(i32),
    /// A file part's file ended before `offset + len`: the segment was truncated since the read.
    ShortFile { offset: u64, len: u64, sent: u64 },
    /// `cancel(job)` ended the job.
    Cancelled,
    /// Any other errno, with what was being done.
    Io { errno: i32, context: String },
    /// The engine was shut down before the job ended (or before it was submitted).
    EngineClosed,
    /// A submission the engine cannot run: a bad or blocking socket fd.
    InvalidArgument(String),
}

impl TransferError {
    /// The code string that crosses into JavaScript as the start of the error message.
    pub fn code(&self) -> &'static str {
        match self {
            TransferError::PeerClosed(_) => "PEER_CLOSED",
            TransferError::ShortFile { .. } => "SHORT_FILE",
            TransferError::Cancelled => "CANCELLED",
            TransferError::Io { .. } => "IO_ERROR",
            TransferError::EngineClosed => "ENGINE_CLOSED",
            TransferError::InvalidArgument(_) => "INVALID_ARGUMENT",
        }
    }

    /// Classifies an errno from a send on the socket; `context` says which call failed.
    pub(crate) fn from_send_errno(errno: i32, context: &str) -> TransferError {
        match errno {
            libc::EPIPE | libc::ECONNRESET | libc::ENOTCONN => TransferError::PeerClosed(errno),
            _ => TransferError::Io {
                errno,
                context: context.to_string(),
            },
        }
    }
}

impl fmt::Display for TransferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransferError::PeerClosed(libc::ECONNRESET) => f.write_str("connection reset by peer"),
            TransferError::PeerClosed(libc::ENOTCONN) => f.write_str("socket is not connected"),
            TransferError::PeerClosed(_) => f.write_str("broken pipe: the peer closed the connection"),
            TransferError::ShortFile { offset, len, sent } => write!(
                f,
                "the file ended before offset {offset} + {len} bytes ({sent} sent): truncated since the read"
            ),
            TransferError::Cancelled => f.write_str("the transfer was cancelled"),
            TransferError::Io { errno, context } => {
                write!(f, "{context}: {}", std::io::Error::from_raw_os_error(*errno))
            }
            TransferError::EngineClosed => f.write_str("the transfer engine is closed"),
            TransferError::InvalidArgument(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for TransferError {}
