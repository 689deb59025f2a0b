//! The Python module `md5x`: hashlib's MD5 interface on md5x's kernels, and what
//! hashlib lacks: many buffers side by side in the SIMD lanes, many files on every core,
//! S3 ETags and MD5-P(K).
//!
//! There is no `unsafe` here. `bytes` are immutable, so they are hashed in place with
//! the GIL released. Every other buffer (bytearray, memoryview, array, numpy, ...) can
//! change under us whenever other Python code runs, so its bytes are copied out through
//! PyO3's safe buffer API, in chunks that stay in cache, and each chunk is hashed with
//! the GIL released. (`hash_many` copies such buffers of up to a chunk whole, in
//! batches of bounded size, and the larger ones a chunk at a time into its lanes.)
//!
//! Locking: a `md5` or `S3Etag` object keeps its state in a `Mutex`. Two rules make this
//! deadlock-free. No thread ever blocks on that mutex while it holds the GIL: every
//! lock goes through `lock_py_attached`, which lets the GIL go before it waits. And no
//! Python code runs while the mutex is held: the buffer is requested from its exporter
//! (whose `__buffer__` may be Python), and the views of a large buffer's chunks are made
//! (allocations that may start the garbage collector, whose finalizers may be anything,
//! such as an update of this very object), all before the lock is taken; under it
//! only bytes are copied and hashed. So a thread may hold the mutex across GIL releases
//! and re-acquisitions (an update of a large buffer stays atomic, as it is in hashlib),
//! and Python code that re-enters the object, even on the same thread, never waits
//! for it.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use md5x::chains::{limits, ETag, Etag, EtagError, ParMd5};
use md5x::{Backend, Digest, Md5};
use pyo3::buffer::{PyBuffer, PyUntypedBuffer};
use pyo3::exceptions::{
    PyBlockingIOError, PyBufferError, PyOSError, PyOverflowError, PyTypeError, PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::{MutexExt, PyOnceLock};
use pyo3::types::{
    PyByteArray, PyBytes, PyInt, PyList, PyMemoryView, PySlice, PyString, PyTuple, PyType,
};

/// Inputs up to this many bytes are hashed without releasing the GIL: letting it go and
/// taking it back costs about as much as hashing them.
const GIL_FREE_MIN: usize = 4 << 10;

/// Buffers other than `bytes` are copied out in chunks of this size (cache-resident),
/// and each chunk is hashed with the GIL released.
const CHUNK: usize = 256 << 10;

/// `hash_many` spreads its inputs over threads once there is at least this much to hash.
const PAR_MIN_BYTES: usize = 1 << 20;

/// `hash_many` of an iterable other than a list or a tuple hashes what it has taken
/// once it holds this many bytes (see `hash_pulled`)...
const PULLED_WINDOW: usize = 64 << 20;

/// ... or this many items.
const PULLED_COUNT: usize = 1 << 14;

/// `hash_many` copies buffers other than `bytes` of at most [`CHUNK`] bytes whole, into
/// one arena reused for batches of this many bytes or a lane set of [`CHUNK`]s,
/// whichever is more (larger ones a chunk at a time, see `hash_chunked`), so that its
/// memory stays bounded however much it is given, and what it copies is still in
/// cache when it is hashed.
const COPY_MIN: usize = 4 << 20;

/// The most threads `hash_many` hashes large mutable buffers on. Each round's copies
/// are made by one thread (they need the GIL), so more threads soon stop paying: on
/// Zen 4, 32 parts of 8 MiB ran 6.1 GB/s on one core and 6.6-7.3 on two. Each thread
/// holds a lane set of 256 KiB chunks (12 MiB with AVX-512), so this also bounds the
/// memory on machines with many cores.
const CHUNKED_THREADS: usize = 4;

/// `hash_files` reads files up to this size whole and hashes them in the lanes; larger
/// files are read a chunk of each at a time, also in the lanes (`md5x::update_many_from`).
const WHOLE_FILE_MAX: u64 = 1 << 20;

/// The most large files `hash_files` holds open at once, over all its threads.
const MAX_HELD_OPEN: usize = 128;

/// [`MAX_HELD_OPEN`], or fewer where the process's limit on open files is low (as
/// it is now: a program may lower it), so that `hash_files` and `s3_etags` work
/// where a loop over `open` would.
fn held_open_max() -> usize {
    md5x::tuning::open_file_cap(MAX_HELD_OPEN)
}

/// Read size when streaming a large file.
const READ_CHUNK: usize = 1 << 20;

/// The file_digest read buffer, as in hashlib.
const FILE_DIGEST_BUF: usize = 1 << 18;

/// How often a call that reads files on other threads looks for a signal (Ctrl-C)
/// while it waits for them (see [`interruptible`]).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Up to this many regular files of up to [`QUICK_BYTES`] in all are read on the
/// calling thread: a thread to wait on costs more than reading them (60 us on Zen 3,
/// where `s3_etag` of a 1 KB file takes 35), and Ctrl-C waits at most for their reads.
const QUICK_FILES: usize = 16;

/// See [`QUICK_FILES`].
const QUICK_BYTES: u64 = 4 << 20;

// ---------------------------------------------------------------------------------------
// Buffers, taken the way hashlib takes them.

/// A buffer-protocol argument, resolved as hashlib resolves it: any C-contiguous
/// buffer, hashed as its raw bytes.
enum Data<'py> {
    /// `bytes`, or a view into one: immutable, hashed in place.
    Bytes(Bound<'py, PyBytes>, Range<usize>),
    /// Any other buffer, as unsigned bytes; and, when it is over [`CHUNK`] bytes,
    /// views of its consecutive chunks of `CHUNK` bytes (see [`chunk_views`]).
    Buffer(PyBuffer<u8>, Vec<PyBuffer<u8>>),
}

/// How memoryview's error for an object with no buffer begins ("memoryview: a
/// bytes-like object is required, not 'int'"), where hashlib says "object supporting
/// the buffer API required".
const NO_BUFFER_MEMORYVIEW: &str = "memoryview: a bytes-like object is required";

fn resolve<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Data<'py>> {
    let py = obj.py();
    if let Some(b) = plain_bytes(obj) {
        let n = b.as_bytes().len();
        return Ok(Data::Bytes(b.clone(), 0..n));
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "Strings must be encoded before hashing",
        ));
    }
    // An exporter written in Python (`__buffer__`, 3.12+) is asked for its buffer once,
    // as hashlib asks it, through a memoryview; every later view (a flat cast, the
    // chunks) comes from that memoryview. Exporters in C (bytearray, array, numpy,
    // mmap, ...) are asked directly: cheaper for small updates, and asking them again
    // for the chunks' views has no effect they could see.
    let direct = !python_exporter(obj);
    let view;
    let src = if direct {
        obj
    } else {
        // Its own errors (raised in `__buffer__`, or "__buffer__ returned
        // non-memoryview object") are hashlib's too; only memoryview's words for an
        // object with no buffer at all are not.
        view = match PyMemoryView::from(obj) {
            Ok(v) => v.into_any(),
            Err(e)
                if e.is_instance_of::<PyTypeError>(py)
                    && e.value(py)
                        .str()?
                        .to_str()?
                        .starts_with(NO_BUFFER_MEMORYVIEW) =>
            {
                return Err(PyTypeError::new_err(
                    "object supporting the buffer API required",
                ))
            }
            Err(e) => return Err(e),
        };
        &view
    };
    let raw = match PyUntypedBuffer::get(src) {
        Ok(raw) => raw,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            return Err(PyTypeError::new_err(
                "object supporting the buffer API required",
            ))
        }
        // A released memoryview, say: the same error as a fresh memoryview of it.
        Err(_) => return through_memoryview(src, obj),
    };
    if !raw.is_c_contiguous() {
        drop(raw);
        // Asked of `src`: an exporter in Python has given its memoryview already.
        return Err(not_contiguous(src));
    }
    if raw.len_bytes() == 0 {
        // Empty, `PyBuffer_IsContiguous` calls any layout contiguous; a memoryview
        // asked for a simple buffer (as hashlib asks) goes by its own flag, which a
        // step other than the item's size clears (`memoryview(b"")[::2]`).
        drop(raw);
        if src.is_instance_of::<PyMemoryView>() && !src.getattr("c_contiguous")?.is_truthy()? {
            return Err(not_contiguous(src));
        }
        return Ok(empty(py));
    }
    // (A small view is copied out: cheaper than asking it for its object.)
    if raw.len_bytes() > GIL_FREE_MIN {
        if let Some(d) = view_of_bytes(src, &raw)? {
            return Ok(d);
        }
    }
    match raw.into_typed::<u8>() {
        Ok(b) if b.dimensions() == 1 => with_chunks(b, src),
        // Any other element format, or more dimensions: its bytes, through a flat cast
        // of a memoryview.
        _ => through_memoryview(src, obj),
    }
}

/// The bytes of a small `bytes` or `bytearray` (at most [`GIL_FREE_MIN`]), which are
/// hashed with the GIL held: many small updates are common, and for them resolving a
/// buffer (requesting it, checking its format, releasing it) cost more than the
/// hashing. A `bytearray` is copied out, as every mutable buffer is.
fn small_input<'a>(obj: &'a Bound<'_, PyAny>) -> Option<Cow<'a, [u8]>> {
    if let Some(b) = plain_bytes(obj) {
        let s = b.as_bytes();
        return (s.len() <= GIL_FREE_MIN).then_some(Cow::Borrowed(s));
    }
    let b = obj.cast_exact::<PyByteArray>().ok()?;
    (b.len() <= GIL_FREE_MIN).then(|| Cow::Owned(b.to_vec()))
}

/// `obj` as `bytes` whose buffer is its own bytes: `bytes` itself, or a subclass that
/// does not export another buffer through Python code (`__buffer__`, 3.12+), as
/// hashlib would hash what that method returns.
fn plain_bytes<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PyBytes>> {
    let b = obj.cast::<PyBytes>().ok()?;
    (obj.is_exact_instance_of::<PyBytes>() || !python_exporter(obj)).then_some(b)
}

/// Whether `obj`'s type exports its buffer through Python code (a `__buffer__` method,
/// PEP 688, Python 3.12+), rather than a C slot (whose `__buffer__` is a slot wrapper).
fn python_exporter(obj: &Bound<'_, PyAny>) -> bool {
    // The usual mutable buffers, without a look-up.
    if obj.is_exact_instance_of::<PyByteArray>() || obj.is_exact_instance_of::<PyMemoryView>() {
        return false;
    }
    let py = obj.py();
    static SLOT_WRAPPER: PyOnceLock<Option<Py<PyType>>> = PyOnceLock::new();
    let slot = SLOT_WRAPPER.get_or_init(py, || {
        // Before 3.12 there is no `__buffer__` to look up, and no Python exporters.
        let wrapper = py.get_type::<PyByteArray>().getattr("__buffer__").ok()?;
        Some(wrapper.get_type().unbind())
    });
    let Some(slot) = slot else {
        return false;
    };
    match obj.get_type().getattr(intern!(py, "__buffer__")) {
        Ok(method) => !method.get_type().is(slot.bind(py)),
        Err(_) => false,
    }
}

/// `buf`, taken from `src` (the object, or a memoryview of it), and views of its
/// chunks if it is large.
fn with_chunks<'py>(buf: PyBuffer<u8>, src: &Bound<'py, PyAny>) -> PyResult<Data<'py>> {
    let chunks = match buf.len_bytes() > CHUNK {
        true => chunk_views(src, buf.len_bytes())?,
        false => Vec::new(),
    };
    Ok(Data::Buffer(buf, chunks))
}

/// Views of `flat`'s consecutive chunks of [`CHUNK`] bytes (`flat`: a one-dimensional
/// buffer of bytes, `n` bytes long, from an exporter in C or a memoryview). They are
/// made before a hasher is locked, since making them allocates Python objects; under
/// the lock the chunks are only copied out (C code, no Python code runs).
fn chunk_views(flat: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<PyBuffer<u8>>> {
    let py = flat.py();
    let view = own_memoryview(flat)?;
    (0..n)
        .step_by(CHUNK)
        .map(|start| {
            let end = (start + CHUNK).min(n);
            PyBuffer::get(&view.get_item(PySlice::new(py, start as isize, end as isize, 1))?)
        })
        .collect()
}

/// A memoryview of `obj` that keeps its own count of the views taken from it.
///
/// A memoryview made from a memoryview, and every slice or cast of it, is counted in the
/// views of the memoryview it came from, and the object under them is released when
/// that count falls to zero. Free-threaded CPython (3.14.7 at least) updates that count
/// without atomics (CPython gh-155606), so threads hashing one memoryview they share
/// could lose increments: the caller's memoryview was then released under it
/// ("operation forbidden on released memoryview object"), and its bytearray could be
/// resized while the caller still held the view. So a memoryview is first asked for its
/// buffer, as hashlib asks it (a request counted atomically), through a
/// `pickle.PickleBuffer`, whose memoryview counts its views for itself.
fn own_memoryview<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyMemoryView>> {
    if !obj.is_instance_of::<PyMemoryView>() {
        return PyMemoryView::from(obj);
    }
    let py = obj.py();
    static PICKLE_BUFFER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let wrap = PICKLE_BUFFER.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("pickle")?.getattr("PickleBuffer")?.unbind())
    })?;
    PyMemoryView::from(&wrap.bind(py).call1((obj,))?)
}

/// Nothing to hash.
fn empty(py: Python<'_>) -> Data<'_> {
    Data::Bytes(PyBytes::new(py, b""), 0..0)
}

/// A buffer taken through a memoryview of `src` (the object `obj`, or a memoryview of
/// it), flattened to unsigned bytes.
fn through_memoryview<'py>(
    src: &Bound<'py, PyAny>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Data<'py>> {
    let view = match own_memoryview(src) {
        Ok(view) => view,
        Err(e) => match numpy_bytes(src)? {
            Some(bytes) => return resolve(&bytes),
            None => return Err(e),
        },
    };
    if !view.getattr("c_contiguous")?.is_truthy()? {
        return Err(not_contiguous(src));
    }
    if src.is(obj) && keeps_dimensions(obj, &view)? {
        return Err(PyBufferError::new_err("Buffer must be single dimension"));
    }
    if view.getattr("nbytes")?.extract::<usize>()? == 0 {
        return Ok(empty(obj.py()));
    }
    let flat = view.call_method1("cast", ("B",))?;
    with_chunks(PyBuffer::get(&flat)?, &flat)
}

/// A numpy array that memoryview refused, as a flat array of its bytes; `None` if
/// `obj` is no numpy array. hashlib asks for a simple buffer, which numpy gives for
/// any array, but a request for the format too (memoryview's) fails where numpy has no
/// buffer format for the items: `datetime64`, `timedelta64`, and structures holding
/// them. So the bytes are reached through numpy's own view of them as `uint8`. An
/// array that is not C-contiguous gets the error hashlib gets.
fn numpy_bytes<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(np) = numpy_of(obj)? else {
        return Ok(None);
    };
    if !obj.getattr("flags")?.getattr("c_contiguous")?.is_truthy()? {
        return Err(not_contiguous(obj));
    }
    let flat = np
        .call_method1("asarray", (obj,))?
        .call_method1("reshape", (-1,))?;
    Ok(Some(flat.call_method1("view", ("u1",))?))
}

/// The numpy module, if `obj` is a numpy array (or of a subclass); numpy is not
/// imported here, only looked up if loaded.
fn numpy_of<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = obj.py();
    let modules = py.import("sys")?.getattr(intern!(py, "modules"))?;
    let Ok(np) = modules.get_item("numpy") else {
        return Ok(None);
    };
    Ok(obj
        .is_instance(&np.getattr(intern!(py, "ndarray"))?)?
        .then_some(np))
}

/// Whether `obj`, an exporter in C (`view`: a memoryview of it), keeps more than one
/// dimension when asked for a simple buffer, as hashlib asks: hashlib then refuses it
/// ("Buffer must be single dimension"). Most exporters (memoryview, numpy) give a
/// simple buffer as one dimension of bytes; ctypes' arrays of arrays keep theirs, also
/// when reached through an exporter that passes the request on (`pickle.PickleBuffer`),
/// so they are told apart by the object the buffer comes from. A memoryview flattens,
/// whatever it views.
fn keeps_dimensions(obj: &Bound<'_, PyAny>, view: &Bound<'_, PyMemoryView>) -> PyResult<bool> {
    let py = obj.py();
    if obj.is_instance_of::<PyMemoryView>()
        || view.getattr(intern!(py, "ndim"))?.extract::<usize>()? < 2
    {
        return Ok(false);
    }
    let array = py.import("ctypes")?.getattr(intern!(py, "Array"))?;
    view.getattr(intern!(py, "obj"))?.is_instance(&array)
}

/// The error hashlib gives for a buffer that is not C-contiguous: it asks the exporter
/// for a simple buffer, and the exporter says why not in its own words. So do we, by
/// making the same request (binascii.crc32 takes its argument as a simple buffer).
fn not_contiguous(obj: &Bound<'_, PyAny>) -> PyErr {
    let asked = obj
        .py()
        .import("binascii")
        .and_then(|m| m.call_method1("crc32", (obj,)));
    match asked {
        Err(e) => e,
        Ok(_) => PyBufferError::new_err("buffer is not C-contiguous"),
    }
}

/// A memoryview whose memory lies inside a `bytes` object (for example a slice of
/// `memoryview(some_bytes)`): that memory is immutable, so it is hashed in place.
fn view_of_bytes<'py>(
    obj: &Bound<'py, PyAny>,
    raw: &PyUntypedBuffer,
) -> PyResult<Option<Data<'py>>> {
    let Ok(view) = obj.cast::<PyMemoryView>() else {
        return Ok(None);
    };
    let base = view.getattr("obj")?;
    let Ok(bytes) = base.cast::<PyBytes>() else {
        return Ok(None);
    };
    let whole = bytes.as_bytes();
    // Address arithmetic only: the range is used to slice `whole`, which is checked.
    let start = (raw.buf_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    let len = raw.len_bytes();
    if start <= whole.len() && len <= whole.len() - start {
        Ok(Some(Data::Bytes(bytes.clone(), start..start + len)))
    } else {
        Ok(None)
    }
}

thread_local! {
    /// Where [`feed`] copies a small buffer out.
    static SMALL_BUF: RefCell<[u8; GIL_FREE_MIN]> = const { RefCell::new([0; GIL_FREE_MIN]) };
}

/// Hash `data` into `sink`: small inputs with the GIL held, larger ones with it
/// released (`bytes` in place, other buffers chunk by chunk).
fn feed(py: Python<'_>, data: &Data<'_>, sink: &mut (dyn FnMut(&[u8]) + Send)) -> PyResult<()> {
    match data {
        Data::Bytes(b, range) => {
            let s = &b.as_bytes()[range.clone()];
            if s.len() <= GIL_FREE_MIN {
                sink(s);
            } else {
                py.detach(|| sink(s));
            }
        }
        Data::Buffer(buf, chunks) => {
            let n = buf.len_bytes();
            if n <= GIL_FREE_MIN {
                // A buffer kept per thread: zeroing a fresh 4 KiB would cost more than
                // the rest of a small update. Nothing here runs Python code, so the
                // borrow cannot be re-entered; a fresh buffer serves if it were.
                SMALL_BUF.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut tmp) => {
                        buf.copy_to_slice(py, &mut tmp[..n])?;
                        sink(&tmp[..n]);
                        Ok::<_, PyErr>(())
                    }
                    Err(_) => {
                        sink(&buf.to_vec(py)?);
                        Ok(())
                    }
                })?;
            } else if n <= CHUNK {
                let mut tmp = vec![0u8; n];
                buf.copy_to_slice(py, &mut tmp)?;
                py.detach(|| sink(&tmp));
            } else {
                // The chunk views were made by `resolve`; `buf` stays held meanwhile,
                // so the exporter cannot resize under us. Copying a chunk out runs no
                // Python code (see the module's notes on locking).
                let mut tmp = vec![0u8; CHUNK];
                for piece in chunks {
                    let len = piece.len_bytes();
                    piece.copy_to_slice(py, &mut tmp[..len])?;
                    py.detach(|| sink(&tmp[..len]));
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The hash object.

/// An optional argument whose absence is not `None` (hashlib rejects `md5(None)`).
struct Arg<'py>(Option<Bound<'py, PyAny>>);

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg(Some(obj.to_owned())))
    }
}

/// An integer argument of any size. PyO3 takes a Python int into 128 bits and raises
/// OverflowError past them; every bound checked here lies far inside 128 bits, so a
/// value past them is held as the nearest 128-bit one, refused or capped as that one
/// is (a ValueError, like any other value out of range), with its own digits kept for
/// the message.
struct Int {
    value: i128,
    /// The decimal digits of a value past 128 bits.
    digits: Option<String>,
}

impl Int {
    const fn new(value: i128) -> Self {
        Int {
            value,
            digits: None,
        }
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.digits {
            Some(d) => f.write_str(d),
            None => write!(f, "{}", self.value),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        // Any object with `__index__` is an integer, as to Python's own functions; its
        // int is taken first, since PyO3's 128-bit conversion under the stable ABI
        // shifts the object itself, which `__index__` alone does not allow.
        let int = if obj.is_instance_of::<PyInt>() {
            obj.to_owned()
        } else {
            let index = py.import("operator")?.getattr(intern!(py, "index"))?;
            index.call1((obj,))?
        };
        match int.extract::<i128>() {
            Ok(value) => Ok(Int::new(value)),
            Err(e) if e.is_instance_of::<PyOverflowError>(py) => {
                let value = if int.lt(0)? { i128::MIN } else { i128::MAX };
                Ok(Int {
                    value,
                    digits: Some(int.str()?.to_str()?.to_owned()),
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// A streaming MD5 object with hashlib's interface: update, digest, hexdigest, copy.
///
/// Safe to share between threads: the state sits behind a lock, and each update is
/// atomic.
#[pyclass(name = "md5", module = "md5x", frozen)]
struct Md5Object {
    state: Mutex<Md5>,
}

impl Md5Object {
    fn empty() -> Self {
        Md5Object {
            state: Mutex::new(Md5::new()),
        }
    }

    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Md5> {
        lock_state(&self.state, py)
    }

    fn absorb(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        absorb(py, obj, &self.state, |h: &mut Md5, d: &[u8]| h.update(d))
    }
}

/// A streaming object's state, locked without ever waiting for the lock while holding
/// the GIL.
fn lock_state<'a, T>(state: &'a Mutex<T>, py: Python<'_>) -> MutexGuard<'a, T> {
    state
        .lock_py_attached(py)
        .unwrap_or_else(PoisonError::into_inner)
}

/// Feeds the buffer `obj` to the state behind `state` with `update`, as one atomic
/// update: the buffer is resolved (which may run Python) before the lock is taken.
fn absorb<T: Send>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    state: &Mutex<T>,
    update: fn(&mut T, &[u8]),
) -> PyResult<()> {
    if let Some(small) = small_input(obj) {
        update(&mut lock_state(state, py), &small);
        return Ok(());
    }
    let data = resolve(obj)?;
    let mut guard = lock_state(state, py);
    let h: &mut T = &mut guard;
    feed(py, &data, &mut |d: &[u8]| update(h, d))
}

#[pymethods]
impl Md5Object {
    /// md5(data=b"", *, usedforsecurity=True): a new MD5 object, fed `data` if given.
    ///
    /// `usedforsecurity` is accepted for compatibility with hashlib and ignored: MD5 is
    /// never secure. `string` is hashlib's older name for `data`.
    #[new]
    #[pyo3(
        signature = (data = Arg(None), *, usedforsecurity = Arg(None), string = Arg(None)),
        text_signature = "(data=b'', *, usedforsecurity=True, string=b'')"
    )]
    fn new(
        py: Python<'_>,
        data: Arg<'_>,
        usedforsecurity: Arg<'_>,
        string: Arg<'_>,
    ) -> PyResult<Self> {
        // Ignored, but asked for its truth as hashlib asks (which may raise).
        if let Some(u) = usedforsecurity.0 {
            u.is_truthy()?;
        }
        let data = match (data.0, string.0) {
            (Some(_), Some(_)) => {
                return Err(PyTypeError::new_err(
                    "md5() takes the data either as 'data' or as 'string', not both",
                ))
            }
            (d, s) => d.or(s),
        };
        let h = Md5Object::empty();
        if let Some(d) = data {
            h.absorb(py, &d)?;
        }
        Ok(h)
    }

    /// Feed more bytes (any object supporting the buffer protocol).
    #[pyo3(signature = (data, /))]
    fn update(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.absorb(py, data)
    }

    /// The digest of the data fed so far, as 16 bytes.
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let d = self.lock(py).finalize();
        PyBytes::new(py, d.as_bytes())
    }

    /// The digest of the data fed so far, as 32 lowercase hex digits.
    fn hexdigest<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        let d = self.lock(py).finalize();
        PyString::new(py, d.to_hex().as_str())
    }

    /// A copy of this object: the two are independent from now on.
    fn copy(&self, py: Python<'_>) -> Self {
        Md5Object {
            state: Mutex::new(self.lock(py).clone()),
        }
    }

    /// "md5".
    #[getter]
    fn name(&self) -> &'static str {
        "md5"
    }

    /// 16: the digest's size in bytes.
    #[getter]
    fn digest_size(&self) -> usize {
        16
    }

    /// 64: MD5's block size in bytes.
    #[getter]
    fn block_size(&self) -> usize {
        64
    }
}

/// file_digest(fileobj, digest="md5", /): the MD5 object of a file's remaining
/// contents, like `hashlib.file_digest(fileobj, "md5")` (which also hashes an
/// io.BytesIO whole, whatever its position). `digest` is there so that hashlib's calls
/// carry over as they are: "md5" in any case, or a callable that makes an MD5 object
/// (`hashlib.md5`, `md5x.md5`); any other hash is a ValueError, as in `hashlib.new`.
/// As in hashlib, the file is fed to the object the callable made, and that object is
/// returned, so bytes it was made with stay in front of the file's. Only a fresh
/// object of another module (`hashlib.md5()`) is swapped for an `md5x.md5`, which
/// hashes the file in md5x's kernels to the same digest.
#[pyfunction]
#[pyo3(signature = (fileobj, /, *digest), text_signature = "(fileobj, digest='md5', /)")]
fn file_digest<'py>(
    py: Python<'py>,
    fileobj: &Bound<'py, PyAny>,
    digest: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    // (Taken as `*args`, so that an explicit None is told from no argument: hashlib
    // calls it, and says None is not callable.)
    let made = match digest.len() {
        0 => None,
        1 => md5_only(&digest.get_item(0)?)?,
        n => {
            return Err(PyTypeError::new_err(format!(
                "file_digest() takes at most 2 positional arguments ({} given)",
                n + 1
            )))
        }
    };
    let sink = match made {
        Some(obj) => match obj.cast_into::<Md5Object>() {
            Ok(ours) => ours,
            Err(e) => {
                let other = e.into_inner();
                if !fresh_md5(&other) {
                    return digest_into(py, fileobj, &other).map(|()| other);
                }
                Bound::new(py, Md5Object::empty())?
            }
        },
        None => Bound::new(py, Md5Object::empty())?,
    };
    let h = sink.get();
    file_pieces(py, fileobj, &mut |piece| h.absorb(py, piece))?;
    Ok(sink.into_any())
}

/// Whether `obj`, an MD5 object of another module, holds no bytes yet: its digest is
/// the empty message's (another message with that digest would be an MD5 preimage).
/// An object whose `digest()` fails or is no `bytes` counts as holding some, and is
/// then fed through its own `update`, where its errors show.
fn fresh_md5(obj: &Bound<'_, PyAny>) -> bool {
    obj.call_method0(intern!(obj.py(), "digest"))
        .is_ok_and(|d| {
            d.cast::<PyBytes>()
                .is_ok_and(|d| d.as_bytes() == md5x::md5(b"").as_bytes())
        })
}

/// `file_digest` into an MD5 object of another module that already holds bytes (its
/// digest is not the empty message's): fed through its own `update`, as hashlib
/// feeds it.
fn digest_into(py: Python<'_>, fileobj: &Bound<'_, PyAny>, obj: &Bound<'_, PyAny>) -> PyResult<()> {
    file_pieces(py, fileobj, &mut |piece| {
        obj.call_method1(intern!(py, "update"), (piece,)).map(drop)
    })
}

/// Hand `fileobj`'s remaining contents to `absorb` as hashlib's `file_digest` reads
/// them: an io.BytesIO's whole memory at once, any other binary reader through
/// `readinto` into one reused buffer of [`FILE_DIGEST_BUF`] bytes.
fn file_pieces(
    py: Python<'_>,
    fileobj: &Bound<'_, PyAny>,
    absorb: &mut dyn FnMut(&Bound<'_, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if fileobj.hasattr("getbuffer")? {
        // io.BytesIO: hash its memory directly.
        return absorb(&fileobj.call_method0("getbuffer")?);
    }
    let binary_readable = fileobj.hasattr("readinto")?
        && fileobj.hasattr("readable")?
        && fileobj.call_method0("readable")?.is_truthy()?;
    if !binary_readable {
        return Err(PyValueError::new_err(format!(
            "'{}' is not a file-like object in binary reading mode.",
            fileobj.repr()?
        )));
    }
    let buf = PyByteArray::new(py, &vec![0u8; FILE_DIGEST_BUF]);
    let view = PyMemoryView::from(&buf)?;
    loop {
        // (hashlib's loop is Python code, which notices Ctrl-C between reads.)
        py.check_signals()?;
        let got = fileobj.call_method1("readinto", (&buf,))?;
        if got.is_none() {
            return Err(PyBlockingIOError::new_err("I/O operation would block."));
        }
        let size: usize = got.extract()?;
        if size == 0 {
            return Ok(());
        }
        absorb(&view.get_item(PySlice::new(py, 0, size as isize, 1))?)?;
    }
}

/// Check `file_digest`'s `digest`: "md5" in any case, or a callable (called once, as
/// hashlib calls it) whose object's `name` is "md5", which is returned.
fn md5_only<'py>(digest: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(s) = digest.extract::<String>() {
        md5_named(&s).map(|()| None)
    } else if digest.is_callable() {
        let made = digest.call0()?;
        md5_named(&made.getattr("name")?.extract::<String>()?)?;
        Ok(Some(made))
    } else {
        Err(PyTypeError::new_err(format!(
            "digest must be 'md5' or a callable that returns an MD5 object, not {}",
            digest.get_type().name()?
        )))
    }
}

/// Whether `name` is MD5's, as `hashlib.new` reads names (any case), with its error.
fn md5_named(name: &str) -> PyResult<()> {
    if name.eq_ignore_ascii_case("md5") {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "md5x computes MD5 only: unsupported hash type {name}"
        )))
    }
}

/// new(name, data=b"", *, usedforsecurity=True): `hashlib.new` for MD5, so that code
/// which names its hash carries over: `name` is "md5" in any case, and any other hash
/// is a ValueError in `hashlib.new`'s words.
///
/// ```python
/// h = md5x.new("md5", b"abc")   # as md5x.md5(b"abc")
/// ```
#[pyfunction]
#[pyo3(
    signature = (name, data = Arg(None), *, usedforsecurity = Arg(None), string = Arg(None)),
    text_signature = "(name, data=b'', *, usedforsecurity=True, string=b'')"
)]
fn new(
    py: Python<'_>,
    name: &Bound<'_, PyAny>,
    data: Arg<'_>,
    usedforsecurity: Arg<'_>,
    string: Arg<'_>,
) -> PyResult<Md5Object> {
    md5_named(plain_name(name)?)?;
    Md5Object::new(py, data, usedforsecurity, string)
}

/// `hashlib.new`'s `name` as a Rust string, refused as the running Python's hashlib
/// refuses it. Up to 3.13: anything but a `str` without NULs or lone surrogates is a
/// TypeError ("name must be a string"). From 3.14: another type is a TypeError in the
/// words of a checked argument, and a `str` is a name like any other, so one with a NUL
/// or a lone surrogate is an unsupported hash (ValueError).
fn plain_name<'a>(name: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    let py = name.py();
    // (Asked only on the way to an error: `version_info` parses the version string.)
    let new_words = || py.version_info() >= (3, 14);
    let Ok(s) = name.cast::<PyString>() else {
        return Err(PyTypeError::new_err(if new_words() {
            let kind = if name.is_none() {
                "None".to_owned()
            } else {
                name.get_type().name()?.to_string()
            };
            format!("new() argument 'name' must be str, not {kind}")
        } else {
            "name must be a string".to_owned()
        }));
    };
    match s.to_str().ok().filter(|s| !s.contains('\0')) {
        Some(plain) => Ok(plain),
        None if new_words() => Err(PyValueError::new_err(
            intern!(py, "md5x computes MD5 only: unsupported hash type ")
                .add(s)?
                .unbind(),
        )),
        None => Err(PyTypeError::new_err("name must be a string")),
    }
}

// ---------------------------------------------------------------------------------------
// Many buffers, many files.

/// Run `f` on every item: on this thread and on up to one more thread per item. A
/// process limit may refuse the extra threads; this thread then does the rest, so the
/// work never fails for want of a thread. Threads take the next item as they finish one.
fn on_threads<W: Send>(items: &mut [W], f: impl Fn(&mut W) + Sync) {
    if let [one] = items {
        return f(one);
    }
    let next = AtomicUsize::new(0);
    let cells: Vec<Mutex<&mut W>> = items.iter_mut().map(Mutex::new).collect();
    let work = || {
        while let Some(cell) = cells.get(next.fetch_add(1, Ordering::Relaxed)) {
            f(&mut cell.lock().unwrap_or_else(PoisonError::into_inner));
        }
    };
    std::thread::scope(|s| {
        for _ in 1..cells.len() {
            if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                break;
            }
        }
        work();
    });
}

/// MD5 of every input: in the SIMD lanes of one core, and on every core when there is
/// enough to hash.
fn many<T: AsRef<[u8]> + Sync>(inputs: &[T]) -> Vec<Digest> {
    let total: usize = inputs.iter().map(|x| x.as_ref().len()).sum();
    let threads = md5x::tuning::cores()
        .min(total / PAR_MIN_BYTES)
        .min(inputs.len() / 16)
        .max(1);
    if threads == 1 {
        return md5x::hash_many(inputs);
    }
    // Contiguous groups of about equal bytes, one per thread.
    let mut groups = Vec::with_capacity(threads);
    let (mut start, mut acc) = (0, 0);
    for (i, x) in inputs.iter().enumerate() {
        acc += x.as_ref().len();
        if acc * threads >= total * (groups.len() + 1) && groups.len() + 1 < threads {
            groups.push(start..i + 1);
            start = i + 1;
        }
    }
    groups.push(start..inputs.len());
    let mut jobs: Vec<(Range<usize>, Vec<Digest>)> =
        groups.into_iter().map(|r| (r, Vec::new())).collect();
    on_threads(&mut jobs, |(r, out)| {
        *out = md5x::hash_many(&inputs[r.clone()])
    });
    jobs.into_iter().flat_map(|(_, out)| out).collect()
}

/// hash_many(buffers): the 16-byte MD5 digest of each buffer, in order.
#[pyfunction]
#[pyo3(signature = (buffers, /))]
fn hash_many<'py>(py: Python<'py>, buffers: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    // One buffer where a list of them is asked for would be taken as its items, ints
    // (`hash_many(b"")` would be `[]`): said at once instead.
    if buffers.is_instance_of::<PyBytes>()
        || buffers.is_instance_of::<PyByteArray>()
        || buffers.is_instance_of::<PyMemoryView>()
        || buffers.is_instance_of::<PyString>()
        || is_flat_buffer(buffers)
    {
        return Err(PyTypeError::new_err(format!(
            "buffers must be an iterable of buffers, not a single {}; pass [data]",
            buffers.get_type().name()?
        )));
    }
    let out =
        if buffers.is_exact_instance_of::<PyList>() || buffers.is_exact_instance_of::<PyTuple>() {
            let data = buffers
                .try_iter()?
                .map(|o| resolve(&o?))
                .collect::<PyResult<Vec<_>>>()?;
            hash_data(py, &data)?
        } else {
            hash_pulled(py, buffers)?
        };
    PyList::new(py, out.iter().map(|d| PyBytes::new(py, d.as_bytes())))
}

/// Whether `obj` (not a list or tuple) is itself one buffer of at most one dimension
/// whose items are numbers (an `mmap`, an `array.array`, a 1-D numpy array): iterated,
/// it gives an element at a time, each hashed alone (numpy's scalars export their
/// bytes, and a ctypes array of `c_char` its one-byte `bytes`), which no caller means.
/// A 2-D array gives its rows, and an array of fixed-size byte strings (format `Ns`)
/// gives `bytes`: both are kept as iterables. Asked through a memoryview, which gives
/// every buffer's shape and format (ctypes leaves out the strides that a buffer request
/// of its own would insist on).
fn is_flat_buffer(obj: &Bound<'_, PyAny>) -> bool {
    if obj.is_exact_instance_of::<PyList>() || obj.is_exact_instance_of::<PyTuple>() {
        return false;
    }
    let py = obj.py();
    let flat = |x: &Bound<'_, PyAny>| {
        x.getattr(intern!(py, "ndim"))
            .and_then(|n| n.extract::<usize>())
            .is_ok_and(|n| n <= 1)
    };
    match PyMemoryView::from(obj) {
        Ok(view) => {
            flat(&view)
                && view
                    .getattr(intern!(py, "format"))
                    .and_then(|f| f.extract::<String>())
                    .is_ok_and(|f| !f.ends_with('s'))
        }
        // A numpy array that memoryview refused (see `numpy_bytes`), whose items are
        // numpy scalars.
        Err(_) => numpy_of(obj).is_ok_and(|np| np.is_some()) && flat(obj),
    }
}

/// `hash_many` of any other iterable, such as a generator: it may hand out one buffer
/// again and again, overwritten in place (a `readinto` loop), so each item's bytes are
/// taken as it comes, before the next is asked for, as a loop over `hashlib.md5` takes
/// them: `bytes` are kept (they cannot change), other buffers up to [`CHUNK`] bytes
/// copied into new `bytes`, and a larger one hashed on its own at once. Up to
/// [`PULLED_WINDOW`] bytes or [`PULLED_COUNT`] items are held at a time, so a generator
/// of file contents is not held whole either.
fn hash_pulled(py: Python<'_>, buffers: &Bound<'_, PyAny>) -> PyResult<Vec<Digest>> {
    let mut out = Vec::new();
    let mut window: Vec<Data<'_>> = Vec::new();
    let mut held = 0;
    for item in buffers.try_iter()? {
        let item = item?;
        // (The buffer is let go here, before the next item is asked for.)
        let data = match resolve(&item)? {
            Data::Buffer(ref buf, ref chunks) if chunks.is_empty() => {
                let n = buf.len_bytes();
                Data::Bytes(
                    PyBytes::new_with(py, n, |b| buf.copy_to_slice(py, b))?,
                    0..n,
                )
            }
            large @ Data::Buffer(..) => {
                out.extend(hash_data(py, &std::mem::take(&mut window))?);
                held = 0;
                let mut h = Md5::new();
                feed(py, &large, &mut |s| h.update(s))?;
                out.push(h.finalize());
                continue;
            }
            bytes => bytes,
        };
        if let Data::Bytes(_, r) = &data {
            held += r.len();
        }
        window.push(data);
        if held >= PULLED_WINDOW || window.len() >= PULLED_COUNT {
            out.extend(hash_data(py, &std::mem::take(&mut window))?);
            held = 0;
        }
    }
    out.extend(hash_data(py, &window)?);
    Ok(out)
}

/// The digests of resolved buffers, in order: `bytes` in place, the others copied out.
fn hash_data(py: Python<'_>, data: &[Data<'_>]) -> PyResult<Vec<Digest>> {
    let mut out = vec![Digest::new([0; 16]); data.len()];
    // `bytes` and buffers of at most CHUNK bytes, in batches; the larger buffers are
    // set aside for `hash_chunked`. The small buffers other than `bytes` are copied
    // into one arena, reused batch after batch: a fresh allocation for each costs a
    // page fault per 4 KiB (10,000 bytearrays of 4 KiB took 30 ms, as long as copying
    // them in Python, against 3 ms for the same bytes). A batch copies at most a lane
    // set of the largest such buffers, or 4 MiB.
    enum Piece<'a> {
        Bytes(&'a [u8]),
        Copied(Range<usize>),
    }
    let budget = (Backend::active().lanes() * CHUNK).max(COPY_MIN);
    let mut arena: Vec<u8> = Vec::new();
    let mut large = Vec::new();
    let mut start = 0;
    while start < data.len() {
        let (mut at, mut pieces, mut used) = (Vec::new(), Vec::new(), 0);
        let mut i = start;
        while i < data.len() {
            match &data[i] {
                Data::Bytes(b, range) => {
                    at.push(i);
                    pieces.push(Piece::Bytes(&b.as_bytes()[range.clone()]));
                }
                Data::Buffer(buf, chunks) if chunks.is_empty() => {
                    let n = buf.len_bytes();
                    if used > 0 && used + n > budget {
                        break;
                    }
                    if arena.len() < used + n {
                        arena.resize(used + n, 0);
                    }
                    buf.copy_to_slice(py, &mut arena[used..used + n])?;
                    at.push(i);
                    pieces.push(Piece::Copied(used..used + n));
                    used += n;
                }
                Data::Buffer(..) => large.push(i),
            }
            i += 1;
        }
        start = i;
        let inputs: Vec<&[u8]> = pieces
            .iter()
            .map(|p| match p {
                Piece::Bytes(b) => *b,
                Piece::Copied(r) => &arena[r.clone()],
            })
            .collect();
        let total: usize = inputs.iter().map(|x| x.len()).sum();
        let digests = if total <= GIL_FREE_MIN {
            md5x::hash_many(&inputs)
        } else {
            py.detach(|| many(&inputs))
        };
        for (i, d) in at.into_iter().zip(digests) {
            out[i] = d;
        }
    }
    hash_chunked(py, data, &large, &mut out)?;
    Ok(out)
}

/// One thread's share of `hash_chunked`: the buffers open in it, each with its hasher
/// and its last chunk copied out.
#[derive(Default)]
struct ChunkWorker {
    open: Vec<OpenBuffer>,
    hashers: Vec<Md5>,
    copies: Vec<Vec<u8>>,
    /// Copy buffers of closed inputs, for the next ones (no fresh pages to fault in).
    spare: Vec<Vec<u8>>,
    done: Vec<(usize, Digest)>,
}

/// A buffer being hashed by a [`ChunkWorker`].
struct OpenBuffer {
    /// Its index in `hash_many`'s arguments.
    input: usize,
    /// Chunks copied so far, and in all.
    next: usize,
    chunks: usize,
}

impl ChunkWorker {
    /// Hash the chunk each open buffer has copied, side by side in the lanes; then
    /// finish the buffers that have no chunk left.
    fn round(&mut self) {
        md5x::update_many(&mut self.hashers, &self.copies);
        let mut k = 0;
        while k < self.open.len() {
            if self.open[k].next == self.open[k].chunks {
                let input = self.open.swap_remove(k).input;
                let h = self.hashers.swap_remove(k);
                self.spare.push(self.copies.swap_remove(k));
                self.done.push((input, h.finalize()));
            } else {
                k += 1;
            }
        }
    }
}

/// `hash_many`'s buffers other than `bytes` that are over [`CHUNK`] bytes (the indices
/// `large` of `data`), hashed side by side a chunk at a time (`md5x::update_many`):
/// each round copies the next chunk of every open buffer with the GIL held, then hashes
/// them with it released. At most a lane's worth of buffers is open per thread, so at
/// most that many chunks are copied at once, whatever the buffers' size (a memoryview
/// of a large mmap, sliced into parts, is never copied whole). On every core when
/// there is enough.
fn hash_chunked(
    py: Python<'_>,
    data: &[Data<'_>],
    large: &[usize],
    out: &mut [Digest],
) -> PyResult<()> {
    let chunks_of = |i: usize| match &data[i] {
        Data::Buffer(_, chunks) => chunks.as_slice(),
        Data::Bytes(..) => &[],
    };
    let total: usize = large.iter().map(|&i| chunks_of(i).len() * CHUNK).sum();
    let threads = md5x::tuning::cores()
        .min(CHUNKED_THREADS)
        .min(total / PAR_MIN_BYTES)
        .min(large.len())
        .max(1);
    let window = Backend::active().lanes();
    let mut workers: Vec<ChunkWorker> = (0..threads).map(|_| ChunkWorker::default()).collect();
    let mut waiting = large.iter().copied();
    loop {
        // Open waiting buffers in the workers with the fewest open, up to a window each.
        while let Some(w) = workers
            .iter_mut()
            .filter(|w| w.open.len() < window)
            .min_by_key(|w| w.open.len())
        {
            let Some(input) = waiting.next() else { break };
            w.open.push(OpenBuffer {
                input,
                next: 0,
                chunks: chunks_of(input).len(),
            });
            w.hashers.push(Md5::new());
            w.copies.push(w.spare.pop().unwrap_or_default());
        }
        if workers.iter().all(|w| w.open.is_empty()) {
            break;
        }
        // Copy each open buffer's next chunk (no Python code runs: see the module's notes).
        for w in &mut workers {
            for (o, copy) in w.open.iter_mut().zip(&mut w.copies) {
                let piece = &chunks_of(o.input)[o.next];
                copy.resize(piece.len_bytes(), 0);
                piece.copy_to_slice(py, copy)?;
                o.next += 1;
            }
        }
        py.detach(|| on_threads(&mut workers, ChunkWorker::round));
    }
    for (i, d) in workers.into_iter().flat_map(|w| w.done) {
        out[i] = d;
    }
    Ok(())
}

/// Told to a call's reads when a signal handler raised while the caller waited (see
/// [`interruptible`]): each read checks it first, and fails once it is set.
#[derive(Clone, Default)]
struct Stop(Arc<AtomicBool>);

impl Stop {
    fn check(&self) -> io::Result<()> {
        match self.0.load(Ordering::Relaxed) {
            true => Err(io::Error::other("interrupted by a signal")),
            false => Ok(()),
        }
    }
}

/// A file whose reads fail once [`Stop`] is set.
struct Stoppable<'a>(std::fs::File, &'a Stop);

impl Read for Stoppable<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.1.check()?;
        self.0.read(buf)
    }
}

/// The sizes of `paths` where they are few regular files, small in all
/// ([`QUICK_FILES`]), each of some size (a `/proc` file says 0, and some of them
/// block): such files are read on the calling thread.
fn quick_sizes(paths: &[PathBuf]) -> Option<Vec<u64>> {
    if paths.len() > QUICK_FILES {
        return None;
    }
    let sizes = paths
        .iter()
        .map(|p| {
            let m = std::fs::metadata(p).ok()?;
            (m.is_file() && m.len() > 0).then_some(m.len())
        })
        .collect::<Option<Vec<u64>>>()?;
    // (Saturating: a sparse file may say almost 2^63 bytes.)
    let total = sizes.iter().fold(0u64, |a, &b| a.saturating_add(b));
    (total <= QUICK_BYTES).then_some(sizes)
}

/// Run `work` on a thread of its own, and wait for it with the GIL released, looking
/// for signals every [`SIGNAL_POLL`], as a loop over hashlib notices Ctrl-C between
/// its reads; or, when it reads only a few small files (`quick`), on this thread.
/// When a signal handler raises (Ctrl-C's `KeyboardInterrupt`), that exception is
/// raised here at once, and `work` is told to stop: its reads fail at their next
/// check, and it ends on its own, holding nothing of Python's. (A read that blocks,
/// such as the open of a FIFO with no writer, ends only when it is answered.) Where
/// no thread can be started, `work` runs here, and signals wait for it. Only the main
/// thread sees signals; elsewhere this just waits.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    quick: bool,
    work: impl FnOnce(&Stop) -> T + Send + 'static,
) -> PyResult<T> {
    let stop = Stop::default();
    if quick {
        return Ok(py.detach(|| work(&stop)));
    }
    // (Held here too, to run it on this thread if no thread can be started.)
    let work = Arc::new(Mutex::new(Some(work)));
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new().name("md5x".into()).spawn({
        let (work, stop) = (Arc::clone(&work), stop.clone());
        move || {
            let work = work.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(work) = work {
                // (The receiver is gone only after a signal: nobody wants it then.)
                let _ = tx.send(work(&stop));
            }
        }
    });
    let Ok(thread) = spawned else {
        let work = work.lock().unwrap_or_else(PoisonError::into_inner).take();
        let work = work.expect("the thread that was not started took nothing");
        return Ok(py.detach(|| work(&stop)));
    };
    py.detach(move || loop {
        match rx.recv_timeout(SIGNAL_POLL) {
            Ok(done) => {
                let _ = thread.join();
                return Ok(done);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    stop.0.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                // It panicked: on with that panic here (PyO3 raises it).
                match thread.join() {
                    Err(panic) => std::panic::resume_unwind(panic),
                    Ok(()) => unreachable!("the work sends its result before it ends"),
                }
            }
        }
    })
}

/// One file read for the lanes, or already hashed.
enum FileRead {
    /// Its contents are the first this many bytes of the slot's buffer.
    Whole(usize),
    /// It was large, and streamed through its own hasher.
    Hashed(Digest),
    /// It is large, and opened, not read: for `md5x::update_many_from` with the
    /// batch's other large files.
    Large(std::fs::File),
}

/// Read a file into `buf` (whose length only grows, so it is zeroed once, not per
/// file), or, when it is large, hand it back opened (`defer`) or hash it on the way.
fn read_file(path: &Path, buf: &mut Vec<u8>, defer: bool, stop: &Stop) -> io::Result<FileRead> {
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let large = size > WHOLE_FILE_MAX;
    if large && defer {
        return Ok(FileRead::Large(f));
    }
    // Room for one byte more than the file had, so that its end shows as a short read.
    let room = if large { READ_CHUNK } else { size as usize + 1 };
    if buf.len() < room {
        buf.resize(room, 0);
    }
    // The rest of the file through one hasher, in chunks.
    let stream = |f: &mut std::fs::File, mut h: Md5, buf: &mut Vec<u8>| loop {
        if buf.len() < READ_CHUNK {
            buf.resize(READ_CHUNK, 0);
        }
        stop.check()?;
        match f.read(&mut buf[..READ_CHUNK]) {
            Ok(0) => return Ok(FileRead::Hashed(h.finalize())),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    if large {
        return stream(&mut f, Md5::new(), buf);
    }
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            // The file grew since its size was read, or has no size to go by (a pipe,
            // a device, a `/proc` file: 0). Past `WHOLE_FILE_MAX` it is streamed, so
            // memory stays bounded whatever it gives.
            if filled as u64 >= WHOLE_FILE_MAX {
                let mut h = Md5::new();
                h.update(&buf[..filled]);
                return stream(&mut f, h, buf);
            }
            buf.resize(2 * buf.len(), 0);
        }
        stop.check()?;
        match f.read(&mut buf[filled..]) {
            Ok(0) => return Ok(FileRead::Whole(filled)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The files `hash_files` or `s3_etags` reads, and how, owned by the thread that
/// reads them (see [`on_files`]).
struct Job {
    paths: Vec<PathBuf>,
    /// Their sizes, where [`quick_sizes`] looked them up already.
    sizes: Option<Vec<u64>>,
    jobs: usize,
    /// Stop at the first error (`errors="raise"`).
    stop_on_error: bool,
}

/// `work` on the files of `f` (taken from it), through [`interruptible`]: on this
/// thread where they are few and small.
fn on_files<T: Send + 'static>(
    py: Python<'_>,
    f: &mut FileList<'_>,
    work: impl FnOnce(&Job, &Stop) -> T + Send + 'static,
) -> PyResult<T> {
    let paths = std::mem::take(&mut f.paths);
    let sizes = quick_sizes(&paths);
    let quick = sizes.is_some();
    let job = Job {
        paths,
        sizes,
        jobs: f.jobs,
        stop_on_error: f.raise,
    };
    interruptible(py, quick, move |stop| work(&job, stop))
}

/// Results for every path of `job`, from `job.jobs` threads that each take batches of
/// up to `cap` paths and fill the lanes with a batch at a time: `batch(state, range,
/// done)` pushes `(index, result)` for the paths in `range`, `state` being its
/// thread's (made by `state(threads)`). With few paths for each thread, batches share
/// the bytes out (`md5x::tuning::batch_ends`: 40 files of 20 MiB in batches of 48 all
/// went to one of 2 threads). `None` marks a path left alone because an error stopped
/// the work (`stop_on_error`), or `stop` did.
fn over_batches<T: Send, S>(
    job: &Job,
    cap: usize,
    stop: &Stop,
    state: impl Fn(usize) -> S + Sync,
    batch: impl Fn(&mut S, Range<usize>, &mut Vec<(usize, io::Result<T>)>) + Sync,
) -> Vec<Option<io::Result<T>>> {
    let Job {
        ref paths,
        ref sizes,
        jobs,
        stop_on_error,
    } = *job;
    let ends = md5x::tuning::batch_ends(paths.len(), jobs, cap, || {
        sizes.clone().unwrap_or_else(|| {
            let ps: Vec<Option<&Path>> = paths.iter().map(|p| Some(p.as_path())).collect();
            md5x::tuning::file_sizes(&ps, jobs)
        })
    });
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let threads = jobs.min(ends.len()).max(1);
    let worker = || {
        let mut st = state(threads);
        let mut done = Vec::new();
        while !(stop_on_error && failed.load(Ordering::Relaxed)) && stop.check().is_ok() {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&end) = ends.get(k) else {
                break;
            };
            let start = if k == 0 { 0 } else { ends[k - 1] };
            let before = done.len();
            batch(&mut st, start..end, &mut done);
            if done[before..].iter().any(|(_, r)| r.is_err()) {
                failed.store(true, Ordering::Relaxed);
            }
        }
        done
    };
    let mut out: Vec<Option<io::Result<T>>> = Vec::new();
    out.resize_with(paths.len(), || None);
    let mut finished: Vec<Vec<(usize, io::Result<T>)>> = (0..threads).map(|_| Vec::new()).collect();
    on_threads(&mut finished, |done| *done = worker());
    for (i, r) in finished.into_iter().flatten() {
        out[i] = Some(r);
    }
    out
}

/// A thread's buffers for [`hash_paths`]: one per file of a batch, and the large files
/// it may hold open.
struct HashState {
    bufs: Vec<Vec<u8>>,
    hold: usize,
}

/// MD5 of every file, on `job.jobs` threads, each filling the lanes with a batch of
/// files: the small ones read whole, the large ones a chunk of each at a time.
fn hash_paths(job: &Job, stop: &Stop) -> Vec<Option<io::Result<Digest>>> {
    let paths = &job.paths;
    // One batch fills the lanes (measured: more or fewer files per batch is slower).
    let cap = Backend::active().lanes().clamp(8, 64);
    let state = |threads: usize| HashState {
        bufs: vec![Vec::new(); cap],
        // Large files each thread may hold open for the lanes: far below the usual
        // limit on open files (1024 on Linux, 256 on macOS) with every thread
        // together, and lower under a lower limit; the rest are streamed one by one.
        hold: (held_open_max() / threads).max(1),
    };
    over_batches(job, cap, stop, state, |st, range, done| {
        let mut ready = Vec::with_capacity(range.len());
        let mut large: Vec<(usize, Stoppable)> = Vec::new();
        for (slot, i) in range.enumerate() {
            match read_file(&paths[i], &mut st.bufs[slot], large.len() < st.hold, stop) {
                Ok(FileRead::Whole(n)) => ready.push((slot, i, n)),
                Ok(FileRead::Hashed(d)) => done.push((i, Ok(d))),
                Ok(FileRead::Large(f)) => large.push((i, Stoppable(f, stop))),
                Err(e) => done.push((i, Err(e))),
            }
        }
        let slices: Vec<&[u8]> = ready
            .iter()
            .map(|&(slot, _, n)| &st.bufs[slot][..n])
            .collect();
        let digests = md5x::hash_many(&slices);
        done.extend(ready.iter().zip(digests).map(|(&(_, i, _), d)| (i, Ok(d))));
        // The large ones side by side, a chunk of each at a time.
        let (index, mut files): (Vec<usize>, Vec<Stoppable>) = large.into_iter().unzip();
        let mut hashers = vec![Md5::new(); files.len()];
        let results = md5x::update_many_from(&mut hashers, &mut files);
        for ((i, r), h) in index.into_iter().zip(results).zip(&hashers) {
            done.push((i, r.map(|()| h.finalize())));
        }
    })
}

/// S3 ETags of every file, on `job.jobs` threads, each hashing the parts of a batch
/// of files side by side in the lanes (`chains::etag_files_with`). A batch holds its
/// files open: at most [`held_open_max`] over all threads (and one on each thread).
fn etag_paths(
    job: &Job,
    part_size: u64,
    threshold: u64,
    stop: &Stop,
) -> Vec<Option<io::Result<ETag>>> {
    let lanes = Backend::active().lanes().clamp(8, 64);
    let threads = job.jobs.min(job.paths.len()).max(1);
    let cap = lanes.min(held_open_max() / threads).max(1);
    over_batches(
        job,
        cap,
        stop,
        |_| (),
        |_, range, done| {
            let mut open = Vec::with_capacity(range.len());
            for i in range {
                match std::fs::File::open(&job.paths[i]) {
                    Ok(f) => open.push((i, f)),
                    Err(e) => done.push((i, Err(e))),
                }
            }
            let files: Vec<&std::fs::File> = open.iter().map(|(_, f)| f).collect();
            let backend = Backend::active();
            let check = |_| stop.check();
            let tags = md5x::chains::etag_files_with(backend, &files, part_size, threshold, &check);
            done.extend(open.iter().map(|&(i, _)| i).zip(tags));
        },
    )
}

/// A path argument (str, bytes or os.PathLike) as open() takes it: the path, and its
/// `os.fspath` (which open() names in its errors).
fn to_path<'py>(
    fspath: &Bound<'py, PyAny>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<(PathBuf, Bound<'py, PyAny>)> {
    let p = fspath.call1((obj,))?;
    // What open() says of a name no system call can take.
    let nul = match p.cast::<PyBytes>() {
        Ok(b) => b.as_bytes().contains(&0),
        // (Asked of the str itself: one with a lone surrogate has no UTF-8 form.)
        Err(_) => p.contains("\0")?,
    };
    if nul {
        return Err(PyValueError::new_err("embedded null byte"));
    }
    if let Ok(b) = p.cast::<PyBytes>() {
        #[cfg(unix)]
        let path = {
            use std::os::unix::ffi::OsStrExt;
            PathBuf::from(std::ffi::OsStr::from_bytes(b.as_bytes()))
        };
        #[cfg(not(unix))]
        let path = PathBuf::from(String::from_utf8_lossy(b.as_bytes()).as_ref());
        return Ok((path, p));
    }
    Ok((p.extract()?, p))
}

/// The OSError open() would raise for `e` on `filename`: errno, strerror and filename
/// set (so Python picks the subclass: FileNotFoundError, IsADirectoryError, ...).
fn os_error(py: Python<'_>, e: &io::Error, filename: &Bound<'_, PyAny>) -> PyErr {
    let filename = filename.clone().unbind();
    match e.raw_os_error() {
        Some(code) => {
            let strerror = py
                .import("os")
                .and_then(|os| os.call_method1("strerror", (code,)))
                .and_then(|s| s.extract::<String>())
                .unwrap_or_else(|_| e.to_string());
            PyOSError::new_err((code, strerror, filename))
        }
        None => PyOSError::new_err((py.None(), e.to_string(), filename)),
    }
}

/// hash_files(paths, *, jobs=None, errors="raise"): the hex MD5 of each file, in order.
///
/// Read on `jobs` threads (None: all cores; at least 1, at most 256 or the core count),
/// small files hashed side by side in the lanes. A file that cannot be read is an
/// OSError naming it, as open() raises: with errors="raise", the first in order is
/// raised; with errors="return", each takes its file's place in the list.
#[pyfunction]
#[pyo3(signature = (paths, /, *, jobs = None, errors = "raise"))]
fn hash_files<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    jobs: Option<Int>,
    errors: &str,
) -> PyResult<Bound<'py, PyList>> {
    let mut f = file_list(py, paths, jobs, errors)?;
    let results = on_files(py, &mut f, hash_paths)?;
    file_results(py, results, &f.names, f.raise, |d| {
        d.to_hex().as_str().to_owned()
    })
}

/// The arguments `hash_files` and `s3_etags` share.
struct FileList<'py> {
    paths: Vec<PathBuf>,
    /// Each path as its errors name it (its `os.fspath`).
    names: Vec<Bound<'py, PyAny>>,
    jobs: usize,
    /// Raise the first error (`errors="raise"`), or return errors in place.
    raise: bool,
}

fn file_list<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    jobs: Option<Int>,
    errors: &str,
) -> PyResult<FileList<'py>> {
    let raise = match errors {
        "raise" => true,
        "return" => false,
        other => {
            return Err(PyValueError::new_err(format!(
                "errors must be 'raise' or 'return', not {other:?}"
            )))
        }
    };
    let jobs = match jobs {
        None => md5x::tuning::cores(),
        Some(j) if j.value >= 1 => {
            md5x::tuning::cap_jobs(usize::try_from(j.value).unwrap_or(usize::MAX))
        }
        Some(j) => {
            return Err(PyValueError::new_err(format!(
                "jobs must be at least 1, not {j}"
            )))
        }
    };
    // One path where a list of them is asked for would be taken as its characters
    // (`hash_files("a.txt")`: files 'a', '.', ...): said at once instead.
    let os = py.import("os")?;
    if paths.is_instance_of::<PyString>()
        || paths.is_instance_of::<PyBytes>()
        || paths.is_instance(&os.getattr("PathLike")?)?
    {
        return Err(PyTypeError::new_err(format!(
            "paths must be an iterable of paths, not a single path ({}); pass [path]",
            paths.get_type().name()?
        )));
    }
    let objs = paths.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    let fspath = os.getattr("fspath")?;
    let (paths, names): (Vec<_>, Vec<_>) = objs
        .iter()
        .map(|o| to_path(&fspath, o))
        .collect::<PyResult<Vec<_>>>()?
        .into_iter()
        .unzip();
    Ok(FileList {
        paths,
        names,
        jobs,
        raise,
    })
}

/// A result per file as `hash_files` and `s3_etags` give them: `show` of each value,
/// and each error as the exception open() would raise (a ValueError for S3's
/// limits), raised (the first in order) or in place.
fn file_results<'py, T>(
    py: Python<'py>,
    results: Vec<Option<io::Result<T>>>,
    names: &[Bound<'py, PyAny>],
    raise: bool,
    show: impl Fn(&T) -> String,
) -> PyResult<Bound<'py, PyList>> {
    if raise {
        if let Some((i, Some(Err(e)))) = results
            .iter()
            .enumerate()
            .find(|(_, r)| matches!(r, Some(Err(_))))
        {
            return Err(file_error(py, e, &names[i]));
        }
    }
    let out = PyList::empty(py);
    for (i, r) in results.iter().enumerate() {
        match r {
            Some(Ok(v)) => out.append(show(v))?,
            Some(Err(e)) => out.append(file_error(py, e, &names[i]).into_value(py))?,
            None => unreachable!("every file is hashed unless an error is raised"),
        }
    }
    Ok(out)
}

/// The exception for an error on file `name`: a ValueError where it is S3's limits
/// (the settings, or too many parts), else the OSError open() would raise.
fn file_error(py: Python<'_>, e: &io::Error, name: &Bound<'_, PyAny>) -> PyErr {
    match e.get_ref().and_then(|x| x.downcast_ref::<EtagError>()) {
        Some(etag_error) => PyValueError::new_err(etag_error.to_string()),
        None => os_error(py, e, name),
    }
}

// ---------------------------------------------------------------------------------------
// Multi-chain modes, and the backend.

/// s3_etag(path, part_size=8 MiB, threshold=8 MiB): the S3 ETag of a file ("hex" or
/// "hex-N"), hashing parts on every core.
#[pyfunction]
#[pyo3(
    signature = (path, part_size = Int::new(8 << 20), threshold = Int::new(8 << 20)),
    text_signature = "(path, part_size=8388608, threshold=8388608)"
)]
fn s3_etag(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    part_size: Int,
    threshold: Int,
) -> PyResult<String> {
    let (part_size, threshold) = etag_settings(part_size, threshold)?;
    let fspath = py.import("os")?.getattr("fspath")?;
    let (p, name) = to_path(&fspath, path)?;
    let backend = Backend::active();
    let quick = quick_sizes(std::slice::from_ref(&p)).is_some();
    let tag = interruptible(py, quick, move |stop| {
        let check = |_| stop.check();
        md5x::chains::etag_file_with(backend, &p, part_size, threshold, 0, &check)
    })?;
    match tag {
        Ok(tag) => Ok(tag.to_string()),
        Err(e) => Err(file_error(py, &e, &name)),
    }
}

/// s3_etags(paths, part_size=8 MiB, threshold=8 MiB, *, jobs=None, errors="raise"): the
/// S3 ETag of each file, in order, the parts of many files hashed side by side in the
/// lanes of every core. Errors as `hash_files` gives them, and a file with more than
/// 10,000 parts or a single PUT over 5 GiB is a ValueError among them; settings outside
/// S3's limits raise ValueError whatever `errors` says.
#[pyfunction]
#[pyo3(
    signature = (paths, /, part_size = Int::new(8 << 20), threshold = Int::new(8 << 20), *, jobs = None, errors = "raise"),
    text_signature = "(paths, /, part_size=8388608, threshold=8388608, *, jobs=None, errors='raise')"
)]
fn s3_etags<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    part_size: Int,
    threshold: Int,
    jobs: Option<Int>,
    errors: &str,
) -> PyResult<Bound<'py, PyList>> {
    let (part_size, threshold) = etag_settings(part_size, threshold)?;
    Etag::new(part_size, threshold).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut f = file_list(py, paths, jobs, errors)?;
    let results = on_files(py, &mut f, move |job, stop| {
        etag_paths(job, part_size, threshold, stop)
    })?;
    file_results(py, results, &f.names, f.raise, ETag::to_string)
}

/// A part size and a threshold from Python integers.
fn etag_settings(part_size: Int, threshold: Int) -> PyResult<(u64, u64)> {
    let part_size = u64::try_from(part_size.value).map_err(|_| {
        // Negative, or beyond 64 bits: outside S3's limits, as the library says it.
        PyValueError::new_err(format!(
            "part size {part_size} bytes is outside S3's limits ({} to {} bytes)",
            limits::MIN_PART_SIZE,
            limits::MAX_PART_SIZE
        ))
    })?;
    let threshold = u64::try_from(threshold.value).map_err(|_| {
        PyValueError::new_err(format!(
            "threshold must be from 0 to 2**64 - 1 bytes, not {threshold}"
        ))
    })?;
    Ok((part_size, threshold))
}

/// S3Etag(data=b"", *, part_size=8 MiB, threshold=8 MiB): a streaming S3 ETag, for
/// an object that is not in a file (an upload as it is sent, a body in memory): feed
/// it with `update`, then `hexdigest()` gives what `s3_etag` gives for a file of those
/// bytes ("hex" below the threshold, else "hex-N").
///
/// A part size outside S3's limits (5 MiB to 5 GiB), or a threshold outside 0 to
/// 2**64 - 1, raises ValueError here, and so does `hexdigest()` for what no upload
/// could have been (more than 10,000 parts, or a single PUT over 5 GiB). Safe to
/// share between threads, as `md5` is.
#[pyclass(name = "S3Etag", module = "md5x", frozen)]
struct EtagObject {
    state: Mutex<Etag>,
    /// The settings, outside the lock: reading them never waits for an update.
    part_size: u64,
    threshold: u64,
}

#[pymethods]
impl EtagObject {
    #[new]
    #[pyo3(
        signature = (data = Arg(None), *, part_size = Int::new(8 << 20), threshold = Int::new(8 << 20)),
        text_signature = "(data=b'', *, part_size=8388608, threshold=8388608)"
    )]
    fn new(py: Python<'_>, data: Arg<'_>, part_size: Int, threshold: Int) -> PyResult<Self> {
        let (part_size, threshold) = etag_settings(part_size, threshold)?;
        let e =
            Etag::new(part_size, threshold).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let e = EtagObject {
            state: Mutex::new(e),
            part_size,
            threshold,
        };
        if let Some(d) = data.0 {
            e.update(py, &d)?;
        }
        Ok(e)
    }

    /// Feed more bytes of the object (any object supporting the buffer protocol).
    #[pyo3(signature = (data, /))]
    fn update(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        absorb(py, data, &self.state, |e: &mut Etag, d: &[u8]| e.update(d))
    }

    /// The ETag of the bytes fed so far: 32 lowercase hex digits, then "-N" for a
    /// multipart upload of N parts.
    fn hexdigest(&self, py: Python<'_>) -> PyResult<String> {
        let tag = lock_state(&self.state, py).finalize();
        tag.map(|t| t.to_string())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// A copy of this object: the two are independent from now on.
    fn copy(&self, py: Python<'_>) -> Self {
        EtagObject {
            state: Mutex::new(lock_state(&self.state, py).clone()),
            part_size: self.part_size,
            threshold: self.threshold,
        }
    }

    /// The part size in bytes.
    #[getter]
    fn part_size(&self) -> u64 {
        self.part_size
    }

    /// The multipart threshold in bytes: an object at least this large is a
    /// multipart upload.
    #[getter]
    fn threshold(&self) -> u64 {
        self.threshold
    }
}

/// md5_par(data, k): the MD5-P(K) digest (16 bytes) of a buffer; K is 4, 8 or 16.
#[pyfunction]
#[pyo3(signature = (data, k))]
fn md5_par<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    k: Int,
) -> PyResult<Bound<'py, PyBytes>> {
    // (A K past 64 bits is a ValueError too, not an OverflowError.)
    let k = usize::try_from(k.value)
        .map_err(|_| PyValueError::new_err(format!("MD5-P(K) needs K = 4, 8 or 16, not {k}")))?;
    let mut h = ParMd5::new(k).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let data = resolve(data)?;
    feed(py, &data, &mut |d: &[u8]| h.update(d))?;
    Ok(PyBytes::new(py, h.finalize().as_bytes()))
}

/// backend(): the name of the kernel set this process hashes with ("avx512", ...).
#[pyfunction]
fn backend() -> &'static str {
    Backend::active().name()
}

/// MD5 at md5x's speed, with hashlib's interface. MD5 is broken for security: use it
/// only where a protocol or an archive requires it.
///
/// Free of the GIL on a free-threaded CPython (PyO3's default since 0.28, said here so
/// that a change of default cannot turn it back on): every object's state is behind its
/// own lock, its one static is set once, and its scratch buffer is per thread
/// (`tests/python/test_threads.py`).
#[pymodule(gil_used = false)]
#[pyo3(name = "md5x")]
fn md5x_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // md5x never falls back silently from a backend it was told to use: a bad
    // MD5X_BACKEND makes the import fail, saying why.
    Backend::from_env().map_err(|e| PyValueError::new_err(format!("MD5X_BACKEND: {e}")))?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Md5Object>()?;
    m.add_class::<EtagObject>()?;
    m.add_function(wrap_pyfunction!(new, m)?)?;
    m.add_function(wrap_pyfunction!(file_digest, m)?)?;
    m.add_function(wrap_pyfunction!(hash_many, m)?)?;
    m.add_function(wrap_pyfunction!(hash_files, m)?)?;
    m.add_function(wrap_pyfunction!(s3_etag, m)?)?;
    m.add_function(wrap_pyfunction!(s3_etags, m)?)?;
    m.add_function(wrap_pyfunction!(md5_par, m)?)?;
    m.add_function(wrap_pyfunction!(backend, m)?)?;
    Ok(())
}
