//! The read path's fast call: `readLogInto()`, a free function of no arguments, reads for the
//! log whose id is in this thread's read array and writes the result there (`ReadIo` slots).
//!
//! Why not a method of `NativeLog` taking the array: on this VM an empty napi-rs method call
//! costs ~220 ns, most of it napi-rs 3's per-call safety machinery (receiver unwrap and type
//! tag check, native-borrow registration and its scope), more than the lookup itself. A free
//! function of no arguments skips all of it. What it needs instead:
//!
//! - The array: one per JS thread (every `readIo()` there returns the same one, held by a
//!   reference never released), over memory this module allocates and never frees (80 bytes a
//!   thread), so the pointer kept here stays valid whatever JS does with the array (even
//!   detaching it). Where a runtime refuses external buffers, the array's memory is the
//!   runtime's: it then stays valid as long as JS does not detach the array, and
//!   ts/storage/native-backend.ts keeps it private.
//! - The log: `NativeLog`s register their log in a per-thread table at creation and leave it
//!   when finalized; the call finds the log by the id in `io[ReadIo.Log]`. An id that is not
//!   there is an error, never a dangling log.
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::convert::{invalid_argument, read_io_args, storage_error, write_read_io, ReadIo};
use crate::log::{lock, SharedLog};

type Io = [i64; ReadIo::Length as usize];

thread_local! {
    /// The memory of this thread's read array, once `readIo()` made it.
    static READ_IO: Cell<*mut Io> = const { Cell::new(ptr::null_mut()) };
    /// The array itself, held for good: every `readIo()` on this thread returns this one, so
    /// that whoever asks writes where `readLogInto` reads.
    static READ_IO_ARRAY: Cell<sys::napi_ref> = const { Cell::new(ptr::null_mut()) };
    /// The logs of `NativeLog`s created on this thread, by id (a free slot is `None`).
    static LOGS: RefCell<Vec<Option<SharedLog>>> = const { RefCell::new(Vec::new()) };
}

/// Registers `log` for `readLogInto` on this thread; returns its id.
pub(crate) fn register(log: &SharedLog) -> u32 {
    LOGS.with_borrow_mut(|logs| {
        let id = match logs.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                logs.push(None);
                logs.len() - 1
            }
        };
        logs[id] = Some(log.clone());
        id as u32
    })
}

/// Drops the registration of id `id` (on the thread that made it: finalizers run there).
pub(crate) fn unregister(id: u32, log: &SharedLog) {
    LOGS.with_borrow_mut(|logs| {
        if let Some(slot) = logs.get_mut(id as usize) {
            if slot
                .as_ref()
                .is_some_and(|l| std::sync::Arc::ptr_eq(l, log))
            {
                *slot = None;
            }
        }
    });
}

/// A napi value made here, returned as it is.
pub struct RawValue(sys::napi_value);

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// This thread's read array (a BigInt64Array of `ReadIo.Length`): the same one every call.
#[napi(ts_return_type = "BigInt64Array")]
pub fn read_io(env: Env) -> Result<RawValue> {
    let raw_env = env.raw();
    let failed = || Error::from_reason("readIo: cannot create the read array");
    let held = READ_IO_ARRAY.get();
    if !held.is_null() {
        let mut array = ptr::null_mut();
        // SAFETY: a reference made below on this thread's env, never deleted.
        let status = unsafe { sys::napi_get_reference_value(raw_env, held, &mut array) };
        if status != sys::Status::napi_ok || array.is_null() {
            return Err(failed());
        }
        return Ok(RawValue(array));
    }
    let len = ReadIo::Length as usize;
    let bytes = len * std::mem::size_of::<i64>();
    let owned: *mut Io = Box::into_raw(Box::new([0i64; ReadIo::Length as usize]));
    let mut buffer = ptr::null_mut();
    // SAFETY: `owned` is `bytes` long and never freed (no finalizer), so the buffer's memory
    // outlives the buffer whatever JS does with it.
    let mut status = unsafe {
        sys::napi_create_external_arraybuffer(
            raw_env,
            owned.cast::<c_void>(),
            bytes,
            None,
            ptr::null_mut(),
            &mut buffer,
        )
    };
    let data = if status == sys::Status::napi_no_external_buffers_allowed {
        // SAFETY: allocated above and not handed out.
        drop(unsafe { Box::from_raw(owned) });
        let mut memory = ptr::null_mut();
        // SAFETY: a plain napi call with out-pointers to locals; the buffer is held for good
        // by the reference to its array below.
        status = unsafe { sys::napi_create_arraybuffer(raw_env, bytes, &mut memory, &mut buffer) };
        memory.cast::<Io>()
    } else {
        owned
    };
    if status != sys::Status::napi_ok || data.is_null() {
        return Err(failed());
    }
    let mut array = ptr::null_mut();
    let mut reference = ptr::null_mut();
    // SAFETY: `buffer` holds `len` int64s from offset 0; plain napi calls with out-pointers.
    unsafe {
        if sys::napi_create_typedarray(
            raw_env,
            sys::TypedarrayType::bigint64_array,
            len,
            buffer,
            0,
            &mut array,
        ) != sys::Status::napi_ok
            || sys::napi_create_reference(raw_env, array, 1, &mut reference) != sys::Status::napi_ok
        {
            return Err(failed());
        }
    }
    READ_IO.set(data);
    READ_IO_ARRAY.set(reference);
    Ok(RawValue(array))
}

/// `read` for the log `io[ReadIo.Log]` names, without a result object: the offset from
/// `io[ReadIo.Offset]`, maxBytes, isolation and minOneMessage from `io[ReadIo.Args]`, the result
/// into the other slots of this thread's `readIo()` array; the slice's file is
/// `segmentFile(io[ReadIo.Segment])`. ts/storage/native-backend.ts builds the `FetchDataInfo`.
#[napi]
pub fn read_log_into() -> Result<()> {
    let io = READ_IO.get();
    if io.is_null() {
        return Err(invalid_argument("readLogInto before readIo"));
    }
    // SAFETY: the array's memory lives for good (module doc); JS on this thread is the only
    // other user and waits for this synchronous call, so nothing else touches it meanwhile.
    let io = unsafe { &mut *io };
    let (max_bytes, isolation, min_one_message) = read_io_args(io).map_err(|n| {
        invalid_argument(&format!(
            "readLogInto: isolation {n} is not a ReadIsolation"
        ))
    })?;
    let offset = io[ReadIo::Offset as usize];
    let id = io[ReadIo::Log as usize];
    let span = LOGS.with_borrow(|logs| {
        let log = usize::try_from(id)
            .ok()
            .and_then(|id| logs.get(id))
            .and_then(Option::as_ref);
        match log {
            Some(log) => Ok(lock(log).read_span(offset, max_bytes, isolation, min_one_message)),
            None => Err(invalid_argument(&format!(
                "readLogInto: no log {id} on this thread"
            ))),
        }
    })?;
    write_read_io(io, &span.map_err(|e| storage_error(&e))?);
    Ok(())
}
