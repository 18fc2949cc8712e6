//! Raw deflate in the browser, for the edited kernel in the link (`source_link`): the browser's
//! own `CompressionStream` and `DecompressionStream` with the format `deflate-raw`, so the page's
//! module carries no compressor of its own (its bundle has a size budget).
//!
//! Both directions are bounded. Reading stops, and cancels the stream, as soon as the output
//! would pass its limit: the fragment's `MAX_COMPRESSED_BYTES` when compressing, the simulator's
//! `MAX_SOURCE_BYTES` when unpacking. Unpacking also feeds the stream its input in slices of
//! `INFLATE_SLICE` bytes, each written only once the reader has taken what the slice before it
//! gave; as raw deflate unpacks a byte to at most 1,032 bytes, a zip bomb in a link is unpacked no
//! further than the limit and one slice's worth (258 KiB) beyond it, however far it would go.
//!
//! This module only talks to the streams; `source_link` says what their answers mean.

use crate::source_link::{Compressed, Inflated, MAX_COMPRESSED_BYTES};
use js_sys::{Reflect, Uint8Array};
use memplay_sim::kernel::limits::MAX_SOURCE_BYTES;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStream, ReadableStreamDefaultReader, WritableStream};

// web-sys 0.3.106 binds CompressionStream and DecompressionStream only behind the
// `web_sys_unstable_apis` cfg, a compiler flag for the whole build (and so a rebuild of every
// crate in it); these few bindings of the two standard classes need no flag. Both are transform
// streams: what is written to `writable` comes out of `readable`, compressed or unpacked.
#[wasm_bindgen]
extern "C" {
    type CompressionStream;
    #[wasm_bindgen(catch, constructor)]
    fn new(format: &str) -> Result<CompressionStream, JsValue>;
    #[wasm_bindgen(method, getter)]
    fn readable(this: &CompressionStream) -> ReadableStream;
    #[wasm_bindgen(method, getter)]
    fn writable(this: &CompressionStream) -> WritableStream;

    type DecompressionStream;
    #[wasm_bindgen(catch, constructor)]
    fn new(format: &str) -> Result<DecompressionStream, JsValue>;
    #[wasm_bindgen(method, getter)]
    fn readable(this: &DecompressionStream) -> ReadableStream;
    #[wasm_bindgen(method, getter)]
    fn writable(this: &DecompressionStream) -> WritableStream;
}

/// The format both streams use: deflate (RFC 1951) without a zlib or gzip header.
const FORMAT: &str = "deflate-raw";

/// Compressed bytes handed to the decompressor at a time (see the module's comment).
const INFLATE_SLICE: usize = 256;

/// Text handed to the compressor at a time. Compressing cannot blow up, so the slices only keep
/// a long edit from being copied into JavaScript at once.
const DEFLATE_SLICE: usize = 64 * 1024;

/// What a bounded read of a stream gave.
enum Output {
    Bytes(Vec<u8>),
    OverLimit,
}

/// The edit compressed with raw deflate, unless it takes more than a link holds.
pub async fn compress(source: &str) -> Compressed {
    // Older browsers (Chromium before 103, Firefox before 113, Safari before 16.4) have no
    // CompressionStream, or none for deflate-raw: the constructor throws, and the page says the
    // kernel cannot go into a link here.
    let Ok(stream) = CompressionStream::new(FORMAT) else {
        return Compressed::Unavailable;
    };
    match transform(
        stream.readable(),
        stream.writable(),
        source.as_bytes(),
        DEFLATE_SLICE,
        MAX_COMPRESSED_BYTES,
    )
    .await
    {
        Ok(Output::Bytes(bytes)) => Compressed::Bytes(bytes),
        Ok(Output::OverLimit) => Compressed::OverLimit,
        Err(_) => Compressed::Unavailable,
    }
}

/// The bytes that raw-deflated `compressed` unpacks to, unless they are more than a kernel may
/// have or `compressed` is not raw deflate (altered, or cut short).
pub async fn inflate(compressed: &[u8]) -> Inflated {
    let Ok(stream) = DecompressionStream::new(FORMAT) else {
        return Inflated::Unavailable;
    };
    match transform(
        stream.readable(),
        stream.writable(),
        compressed,
        INFLATE_SLICE,
        MAX_SOURCE_BYTES,
    )
    .await
    {
        Ok(Output::Bytes(bytes)) => Inflated::Bytes(bytes),
        Ok(Output::OverLimit) => Inflated::OverLimit,
        // The stream fails on data that is not raw deflate, on data after its last block and on
        // a last block that never comes.
        Err(_) => Inflated::Corrupt,
    }
}

/// Writes `input` in slices into a transform stream's `writable` side and reads its `readable`
/// side until it ends, or until the output would pass `limit` bytes, when the read is cancelled.
async fn transform(
    readable: ReadableStream,
    writable: WritableStream,
    input: &[u8],
    slice: usize,
    limit: usize,
) -> Result<Output, JsValue> {
    let writer = writable.get_writer()?;
    let slices: Vec<Uint8Array> = input.chunks(slice).map(Uint8Array::from).collect();
    // The writer runs beside the reader: a transform stream takes the next write only once its
    // output has been read, so writing and reading in one sequence would wait forever.
    wasm_bindgen_futures::spawn_local(async move {
        for slice in slices {
            // A write fails once the reader has cancelled or the stream has failed; the reader
            // reports which.
            if JsFuture::from(writer.write_with_chunk(&slice))
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = JsFuture::from(writer.close()).await;
    });
    let reader: ReadableStreamDefaultReader = readable.get_reader().unchecked_into();
    let mut output = Vec::new();
    loop {
        let result = JsFuture::from(reader.read()).await?;
        if Reflect::get(&result, &JsValue::from_str("done"))?.is_truthy() {
            return Ok(Output::Bytes(output));
        }
        let chunk: Uint8Array = Reflect::get(&result, &JsValue::from_str("value"))?.dyn_into()?;
        let length = chunk.length() as usize;
        if output.len() + length > limit {
            // Cancelling ends the transform and fails the writer's next write, so nothing more
            // is unpacked.
            let _ = reader.cancel();
            return Ok(Output::OverLimit);
        }
        let start = output.len();
        output.resize(start + length, 0);
        chunk.copy_to(&mut output[start..]);
    }
}
