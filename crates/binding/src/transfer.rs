//! `FileRecords` (an open `.log` file and a byte range of it) and `TransferEngine` (forwards to
//! `ferrolog-transfer`, whose one native thread sends them to sockets with sendfile).
//!
//! Completions come back through one ThreadsafeFunction per engine, weak (unref'd: an idle
//! engine never keeps the process alive) and called NonBlocking from the engine thread. At
//! environment teardown a cleanup hook stops delivering and shuts the engine down (joining its
//! thread) before Node closes the ThreadsafeFunction, so nothing calls into a torn-down env.
use std::fs::File;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use ferrolog_transfer::{Completion, Part, Submitted, TransferOptions};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::convert::{coded_error, invalid_argument};

/// Kafka's FileRecords: an open .log file and a byte range of it, kept open until closed or collected.
#[napi]
pub struct FileRecords {
    file: Option<Arc<File>>,
    position: u32,
    size: u32,
}

impl FileRecords {
    pub(crate) fn new(file: Arc<File>, position: u32, size: u32) -> FileRecords {
        FileRecords {
            file: Some(file),
            position,
            size,
        }
    }
}

#[napi]
impl FileRecords {
    /// Opens `path` (a segment deleted since the read may still be there); throws an error whose message starts with "NOT_FOUND: " or "STORAGE_ERROR: " otherwise.
    #[napi(factory)]
    pub fn open(path: String, position: u32, size: u32) -> Result<FileRecords> {
        match File::open(&path) {
            Ok(file) => Ok(FileRecords::new(Arc::new(file), position, size)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(coded_error("NOT_FOUND", &format!("open {path}: {e}")))
            }
            Err(e) => Err(coded_error("STORAGE_ERROR", &format!("open {path}: {e}"))),
        }
    }

    /// Dups `fd` (an fd of this process, e.g. the pure-TS backend's segment fd).
    #[napi(factory)]
    pub fn from_fd(fd: i32, position: u32, size: u32) -> Result<FileRecords> {
        if fd < 0 {
            return Err(invalid_argument(&format!("fd {fd} is negative")));
        }
        // SAFETY: the fd is only borrowed for the dup below; a closed fd makes the dup fail
        // with EBADF rather than touch anything.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let owned = borrowed
            .try_clone_to_owned()
            .map_err(|e| invalid_argument(&format!("dup fd {fd}: {e}")))?;
        Ok(FileRecords::new(
            Arc::new(File::from(owned)),
            position,
            size,
        ))
    }

    #[napi(getter)]
    pub fn position(&self) -> u32 {
        self.position
    }

    #[napi(getter)]
    pub fn size_in_bytes(&self) -> u32 {
        self.size
    }

    /// Kafka's `FileRecords.slice`: `size` bytes from `position` (relative to this range's start) of the same open file, sharing its handle. Throws "INVALID_ARGUMENT: ..." for a range outside this one.
    #[napi]
    pub fn slice(&self, position: u32, size: u32) -> Result<FileRecords> {
        let file = self.file()?.clone();
        let end = position as u64 + size as u64;
        if end > self.size as u64 {
            return Err(invalid_argument(&format!(
                "slice [{position}, {end}) is outside a range of {} bytes",
                self.size
            )));
        }
        Ok(FileRecords::new(file, self.position + position, size))
    }

    /// The bytes, read with pread (the copy path; also used by tests). Short if the file was truncated.
    #[napi]
    pub fn read(&self) -> Result<Buffer> {
        let file = self.file()?;
        let mut buf = vec![0u8; self.size as usize];
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], self.position as u64 + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(coded_error("STORAGE_ERROR", &format!("read: {e}"))),
            }
        }
        buf.truncate(done);
        Ok(buf.into())
    }

    /// Reads the range's bytes from `offset` (relative to its start) into `target`, as many as fit and the range holds, with pread, and returns how many it read: fewer only if the file was truncated. The copy path reads ranges into buffers it reuses with this. Throws "INVALID_ARGUMENT: ..." for an offset past the range.
    #[napi]
    pub fn read_into(&self, mut target: Buffer, offset: u32) -> Result<u32> {
        let file = self.file()?;
        if offset > self.size {
            return Err(invalid_argument(&format!(
                "offset {offset} is past a range of {} bytes",
                self.size
            )));
        }
        let want = target.len().min((self.size - offset) as usize);
        let start = self.position as u64 + offset as u64;
        let buf = &mut target[..want];
        let mut done = 0;
        while done < want {
            match file.read_at(&mut buf[done..], start + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(coded_error("STORAGE_ERROR", &format!("read: {e}"))),
            }
        }
        Ok(done as u32)
    }

    /// Drops this object's handle of the file now (idempotent); the file stays open while a transfer holds it.
    #[napi]
    pub fn close(&mut self) {
        self.file = None;
    }
}

impl FileRecords {
    fn file(&self) -> Result<&Arc<File>> {
        self.file
            .as_ref()
            .ok_or_else(|| invalid_argument("the FileRecords is closed"))
    }
}

/// The JS callback's arguments: `(jobId, bytesSent, error)`, `error` null on success.
type CompletionArgs = FnArgs<(f64, f64, Either<String, Null>)>;
/// The callback as the engine thread calls it: not error-first, weak (unref'd).
type CompletionCallback = ThreadsafeFunction<Completion, (), CompletionArgs, Status, false, true>;

/// The zero-copy transfer engine: one native thread; completions come back through one threadsafe function.
#[napi]
pub struct TransferEngine {
    engine: Arc<ferrolog_transfer::TransferEngine>,
}

#[napi]
impl TransferEngine {
    #[napi(
        constructor,
        ts_args_type = "onComplete: (jobId: number, bytesSent: number, error: string | null) => void, chunkBytes?: number | undefined | null, inlineBytes?: number | undefined | null"
    )]
    pub fn new(
        env: Env,
        on_complete: Function<CompletionArgs, ()>,
        chunk_bytes: Option<f64>,
        inline_bytes: Option<f64>,
    ) -> Result<Self> {
        let callback: CompletionCallback = on_complete
            .build_threadsafe_function::<Completion>()
            .weak::<true>()
            .callee_handled::<false>()
            .build_callback(|ctx| {
                let c = ctx.value;
                let error = match c.result {
                    Ok(()) => Either::B(Null),
                    Err(e) => Either::A(format!("{}: {e}", e.code())),
                };
                Ok(FnArgs::from((c.job as f64, c.bytes_sent as f64, error)))
            })?;
        let mut options = TransferOptions::default();
        if let Some(chunk) = chunk_bytes {
            if !(1.0..=u32::MAX as f64).contains(&chunk) {
                return Err(invalid_argument(&format!(
                    "chunkBytes must be a positive byte count, got {chunk}"
                )));
            }
            options.chunk_bytes = chunk as u64;
        }
        if let Some(inline) = inline_bytes {
            if !(0.0..=u32::MAX as f64).contains(&inline) || inline.fract() != 0.0 {
                return Err(invalid_argument(&format!(
                    "inlineBytes must be a byte count, got {inline}"
                )));
            }
            options.inline_bytes = inline as u64;
        }
        // Cleared by the env cleanup hook: from then on completions are dropped, not delivered.
        let delivering = Arc::new(AtomicBool::new(true));
        let deliver = delivering.clone();
        let engine = ferrolog_transfer::TransferEngine::new(options, move |completion| {
            if deliver.load(Ordering::Acquire) {
                callback.call(completion, ThreadsafeFunctionCallMode::NonBlocking);
            }
        })
        .map_err(|e| coded_error(e.code(), &e.to_string()))?;
        let engine = Arc::new(engine);
        // Registered after the ThreadsafeFunction was created, so it runs before Node's own
        // cleanup of it (hooks run in reverse order). Weak: an engine collected earlier was
        // already shut down by its drop.
        let weak: Weak<ferrolog_transfer::TransferEngine> = Arc::downgrade(&engine);
        env.add_env_cleanup_hook((weak, delivering), |(weak, delivering)| {
            delivering.store(false, Ordering::Release);
            if let Some(engine) = weak.upgrade() {
                engine.shutdown();
            }
        })?;
        Ok(TransferEngine { engine })
    }

    /// Writes parts to the socket fd: at once when the job is small (inlineBytes) and its file ranges are in the page cache, returning 0; else queues them (Buffers are copied; FileRecords keep their file open) and returns the job id, whose completion comes to onComplete. Throws "ENGINE_CLOSED: ..." after close, "INVALID_ARGUMENT: ..." for a bad fd or a closed FileRecords, and the error of a write made at once ("PEER_CLOSED: ...", "SHORT_FILE: ...", "IO_ERROR: ...").
    #[napi(ts_args_type = "socketFd: number, parts: Array<Buffer | FileRecords>")]
    pub fn send(
        &self,
        socket_fd: i32,
        parts: Vec<Either<Buffer, ClassInstance<FileRecords>>>,
    ) -> Result<f64> {
        let parts = parts
            .iter()
            .map(|part| match part {
                Either::A(bytes) => Ok(Part::Bytes(bytes.to_vec())),
                Either::B(records) => Ok(Part::File {
                    file: records.file()?.clone(),
                    offset: records.position as u64,
                    len: records.size as u64,
                }),
            })
            .collect::<Result<Vec<Part>>>()?;
        match self.engine.submit(socket_fd, parts) {
            Ok(Submitted::Sent(_)) => Ok(0.0),
            Ok(Submitted::Queued(job)) => Ok(job as f64),
            Err(e) => Err(coded_error(e.code(), &e.to_string())),
        }
    }

    /// Ends the job with CANCELLED (its completion still comes). Returns false if it already ended.
    #[napi]
    pub fn cancel(&self, job_id: f64) -> bool {
        job_id >= 1.0 && job_id.fract() == 0.0 && self.engine.cancel(job_id as u64)
    }

    #[napi]
    pub fn close(&self) {
        self.engine.shutdown();
    }
}
