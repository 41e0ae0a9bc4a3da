//! Moves an allowed connection's bytes both ways without copying them
//! through the guard: each direction splices (`splice(2)`) from one
//! socket into a pipe and from the pipe into the other socket, so the
//! data stays in the kernel. Readiness comes from tokio, so a relay costs
//! no thread.
//!
//! One direction reaching its end shuts down writing on the other socket
//! and the other direction goes on (a half-closed connection stays
//! usable); an error on either ends both.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// How much one splice may move. A pipe holds 64 KiB unless grown; a
/// larger pipe means fewer wake-ups per megabyte.
const PIPE_BYTES: usize = 1 << 20;

/// Relays until both directions are done; the bytes moved out (client to
/// upstream) and in, counted even when the relay ends on an error.
pub async fn relay(client: &TcpStream, upstream: &TcpStream) -> (u64, u64) {
    let out = AtomicU64::new(0);
    let inn = AtomicU64::new(0);
    let _ = tokio::try_join!(
        one_way(client, upstream, &out),
        one_way(upstream, client, &inn)
    );
    (out.into_inner(), inn.into_inner())
}

/// Moves bytes from `from` to `to` until `from` ends, then shuts down
/// writing on `to`.
async fn one_way(from: &TcpStream, to: &TcpStream, moved: &AtomicU64) -> io::Result<()> {
    let pipe = Pipe::new()?;
    loop {
        let filled = loop {
            from.readable().await?;
            match from.try_io(Interest::READABLE, || {
                splice(from.as_raw_fd(), pipe.write.as_raw_fd(), pipe.bytes)
            }) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        };
        if filled == 0 {
            // SAFETY: shutdown on a socket this relay borrows; it only
            // stops further writes.
            unsafe { libc::shutdown(to.as_raw_fd(), libc::SHUT_WR) };
            return Ok(());
        }
        let mut left = filled;
        while left > 0 {
            to.writable().await?;
            match to.try_io(Interest::WRITABLE, || {
                splice(pipe.read.as_raw_fd(), to.as_raw_fd(), left)
            }) {
                Ok(n) => left -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        moved.fetch_add(filled as u64, Ordering::Relaxed);
    }
}

/// One direction's pipe. Filled only when empty, so a splice into it never
/// waits on the pipe, only on the socket.
struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    bytes: usize,
}

impl Pipe {
    fn new() -> io::Result<Self> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe2 writes two descriptors into the array on success.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are new and owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // Growing the pipe may be refused (the per-user pipe budget); the
        // size it has then is what a splice may move.
        // SAFETY: fcntl on a descriptor owned here.
        let grown = unsafe {
            libc::fcntl(
                write.as_raw_fd(),
                libc::F_SETPIPE_SZ,
                PIPE_BYTES as libc::c_int,
            )
        };
        let bytes = if grown > 0 {
            grown as usize
        } else {
            // SAFETY: as above.
            let size = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_GETPIPE_SZ) };
            if size > 0 {
                size as usize
            } else {
                4096
            }
        };
        Ok(Self { read, write, bytes })
    }
}

fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: both descriptors are open for the call; no offsets are used.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let dial = TcpStream::connect(listener.local_addr().unwrap());
        let (dialled, accepted) = tokio::join!(dial, listener.accept());
        (dialled.unwrap(), accepted.unwrap().0)
    }

    #[tokio::test]
    async fn moves_every_byte_both_ways_and_passes_on_each_end() {
        let (mut client, client_side) = pair().await;
        let (upstream_side, mut server) = pair().await;
        let relaying = tokio::spawn(async move { relay(&client_side, &upstream_side).await });

        let request: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let answer: Vec<u8> = (0..5_000_000u32).map(|i| (i % 241) as u8).collect();
        let sent = request.clone();
        let writer = tokio::spawn(async move {
            client.write_all(&sent).await.unwrap();
            client.shutdown().await.unwrap();
            let mut got = Vec::new();
            client.read_to_end(&mut got).await.unwrap();
            got
        });
        let mut heard = Vec::new();
        server.read_to_end(&mut heard).await.unwrap();
        assert_eq!(
            heard, request,
            "the server gets the request whole, then its end"
        );
        server.write_all(&answer).await.unwrap();
        server.shutdown().await.unwrap();
        assert_eq!(
            writer.await.unwrap(),
            answer,
            "the answer arrives whole after the half-close"
        );
        assert_eq!(
            relaying.await.unwrap(),
            (request.len() as u64, answer.len() as u64)
        );
    }

    #[tokio::test]
    async fn a_reset_on_one_side_ends_the_relay() {
        let (client, client_side) = pair().await;
        let (upstream_side, server) = pair().await;
        let relaying = tokio::spawn(async move { relay(&client_side, &upstream_side).await });
        client.set_zero_linger().unwrap();
        drop(client);
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(5), relaying).await;
        assert!(outcome.is_ok(), "the relay ends once the client is gone");
        drop(server);
    }
}
