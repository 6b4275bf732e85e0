//! [`Archive`]: an uncompressed tar on its way into a cell, held in memory (small files, a
//! login) or in an unnamed temporary file (folders), and streamed to the engine.

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};

/// A tar to stage into a cell.
#[derive(Debug)]
pub struct Archive {
    /// Its size in bytes.
    pub len: u64,
    body: Body,
}

#[derive(Debug)]
enum Body {
    Memory(Bytes),
    /// An unnamed temporary file: gone from the disk as soon as it is closed.
    File(std::fs::File),
}

impl Archive {
    /// A tar held in memory.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self {
            len: bytes.len() as u64,
            body: Body::Memory(bytes),
        }
    }

    /// A tar written to an unnamed temporary file (rewound here).
    pub fn from_file(mut file: std::fs::File) -> std::io::Result<Self> {
        use std::io::Seek;
        let len = file.seek(std::io::SeekFrom::End(0))?;
        file.rewind()?;
        Ok(Self {
            len,
            body: Body::File(file),
        })
    }

    /// The whole tar in memory (for backends that need it at once, and for tests).
    pub fn into_bytes(self) -> std::io::Result<Bytes> {
        match self.body {
            Body::Memory(bytes) => Ok(bytes),
            Body::File(mut file) => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file, &mut bytes)?;
                Ok(bytes.into())
            }
        }
    }

    /// The tar as a stream of chunks. A read error ends the stream early, which the engine
    /// reports as a broken archive.
    pub fn into_stream(self) -> BoxStream<'static, Bytes> {
        match self.body {
            Body::Memory(bytes) => futures_util::stream::once(async move { bytes }).boxed(),
            Body::File(file) => tokio_util::io::ReaderStream::with_capacity(
                tokio::fs::File::from_std(file),
                1 << 20,
            )
            .take_while(|chunk| std::future::ready(chunk.is_ok()))
            .filter_map(|chunk| std::future::ready(chunk.ok()))
            .boxed(),
        }
    }
}
