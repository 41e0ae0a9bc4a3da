//! `computerd relay 127.0.0.1:PORT`: one TCP connection to a port of this
//! computer, carried over the process's stdin and stdout.
//!
//! The host runs it with `docker exec` when the engine is remote: the exec's
//! attached streams ride the engine connection (TLS or ssh) the host already
//! has, so computerd's API, the viewer and VNC are reached without any port
//! published beyond the remote machine's loopback. One relay carries one
//! connection; HTTP keep-alive makes that many calls.
//!
//! Only loopback addresses are relayed: the relay is a way into this
//! computer's own services, not out of it.
//!
//! The exec's stdin and stdout are pipes, so the bytes move with splice(2)
//! between them and the socket, never through this process: a file sent to
//! the computer crosses the relay at the cost of the kernel's page moves.
//! Anything that is not a pipe (a test's file) is copied instead.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// Bytes moved per read; a frame or a tar block arrives in a few.
const CHUNK: usize = 64 * 1024;

/// Bytes asked of one splice, and the size asked for the exec's pipes:
/// Docker's are 64 KiB, so a sender and this relay would take turns every
/// 64 KiB.
const PIPE_BYTES: usize = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("usage: computerd relay 127.0.0.1:PORT (one address, a loopback one)")]
    Usage,
    #[error("`{0}` is not a loopback address: the relay only reaches this computer's own ports")]
    NotLoopback(SocketAddr),
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("relaying {addr}: {source}")]
    Io {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The address to relay, from the arguments after `relay`.
pub fn target(args: &[String]) -> Result<SocketAddr, RelayError> {
    let [addr] = args else {
        return Err(RelayError::Usage);
    };
    let addr: SocketAddr = addr.parse().map_err(|_| RelayError::Usage)?;
    if !addr.ip().is_loopback() {
        return Err(RelayError::NotLoopback(addr));
    }
    Ok(addr)
}

/// Connects to `addr` and carries stdin to it and it to stdout until the
/// connection closes. Stdin's end closes the connection's sending half, so a
/// request already sent still gets its answer.
pub fn run(addr: SocketAddr) -> Result<(), RelayError> {
    let socket = TcpStream::connect(addr).map_err(|source| RelayError::Connect { addr, source })?;
    let io = |source| RelayError::Io { addr, source };
    // Unbuffered handles on fds 0 and 1: Rust's own stdout is line-buffered.
    let stdin = File::from(std::io::stdin().as_fd().try_clone_to_owned().map_err(io)?);
    let stdout = File::from(std::io::stdout().as_fd().try_clone_to_owned().map_err(io)?);
    carry(socket, stdin, stdout).map_err(io)
}

/// Moves `input` into `socket` on a thread of its own, and `socket` into
/// `output` on this one, until the socket's end.
///
/// The socket does not block, and neither does a splice: a splice that
/// waited on the socket would hold the output pipe's lock all the while, so
/// the reader at the other end could not take an answer already in the pipe
/// before the next request came, and it never would.
fn carry(socket: TcpStream, input: File, output: File) -> io::Result<()> {
    // Every hop adds latency; small writes (a key press, a VNC update
    // request) must not wait for Nagle.
    let _ = socket.set_nodelay(true);
    socket.set_nonblocking(true)?;
    let sending = socket.try_clone()?;
    std::thread::spawn(move || {
        let _ = forward(&input, &sending);
        let _ = sending.shutdown(Shutdown::Write);
    });
    forward(&socket, &output)
}

/// Moves bytes from `from` to `to` until the end of input: spliced when
/// either is a pipe, copied otherwise. Either may be non-blocking.
fn forward<F, T>(from: &F, to: &T) -> io::Result<()>
where
    F: AsFd,
    T: AsFd,
    for<'a> &'a F: Read,
    for<'a> &'a T: Write,
{
    for fd in [from.as_fd(), to.as_fd()] {
        // Best effort: a pipe keeps its size where the system caps it.
        // SAFETY: F_SETPIPE_SZ on a descriptor we hold; a non-pipe fails.
        unsafe {
            libc::fcntl(
                fd.as_raw_fd(),
                libc::F_SETPIPE_SZ,
                PIPE_BYTES as libc::c_int,
            )
        };
    }
    let mut moved_any = false;
    loop {
        // SAFETY: both descriptors are open for the whole call; no offsets.
        let n = unsafe {
            libc::splice(
                from.as_fd().as_raw_fd(),
                std::ptr::null_mut(),
                to.as_fd().as_raw_fd(),
                std::ptr::null_mut(),
                PIPE_BYTES,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
            )
        };
        match n {
            0 => return Ok(()),
            n if n > 0 => moved_any = true,
            _ => {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::EAGAIN) => {
                        wait(from.as_fd(), libc::POLLIN)?;
                        wait(to.as_fd(), libc::POLLOUT)?;
                    }
                    // Neither end is a pipe: nothing moved yet, so copy.
                    Some(libc::EINVAL) if !moved_any => {
                        return copy(from, from.as_fd(), to, to.as_fd())
                    }
                    _ => return Err(e),
                }
            }
        }
    }
}

/// Copies until end of input, writing each chunk as soon as it is read;
/// `from` and `to` are the descriptors to wait on when either would block.
fn copy(
    mut reader: impl Read,
    from: BorrowedFd<'_>,
    mut writer: impl Write,
    to: BorrowedFd<'_>,
) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match blocking(from, libc::POLLIN, || reader.read(&mut buf))? {
            0 => return Ok(()),
            n => n,
        };
        let mut sent = 0;
        while sent < n {
            match blocking(to, libc::POLLOUT, || writer.write(&buf[sent..n]))? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                w => sent += w,
            }
        }
    }
}

/// Runs `op` until it neither is interrupted nor would block, waiting for
/// `fd` to be ready for `events` when it would.
fn blocking<R>(
    fd: BorrowedFd<'_>,
    events: i16,
    mut op: impl FnMut() -> io::Result<R>,
) -> io::Result<R> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait(fd, events)?,
            done => return done,
        }
    }
}

/// Waits until `fd` is ready for `events`, or hung up or failed, which the
/// next call on it reports.
fn wait(fd: BorrowedFd<'_>, events: i16) -> io::Result<()> {
    let mut poll = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    loop {
        // SAFETY: one pollfd, valid for the call.
        if unsafe { libc::poll(&mut poll, 1, -1) } >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_loopback_address_is_relayed() {
        assert_eq!(
            target(&args(&["127.0.0.1:7070"])).unwrap(),
            "127.0.0.1:7070".parse().unwrap()
        );
        assert!(target(&args(&["[::1]:6080"])).is_ok());
    }

    #[test]
    fn other_addresses_and_shapes_are_refused() {
        assert!(matches!(
            target(&args(&["10.0.0.1:7070"])),
            Err(RelayError::NotLoopback(_))
        ));
        assert!(matches!(target(&args(&[])), Err(RelayError::Usage)));
        assert!(matches!(
            target(&args(&["127.0.0.1:7070", "x"])),
            Err(RelayError::Usage)
        ));
        assert!(matches!(
            target(&args(&["localhost:7070"])),
            Err(RelayError::Usage)
        ));
    }

    /// An echo server on a free loopback port: `whole` answers only after
    /// its input ended, as an HTTP server may after a half-close; otherwise
    /// it answers each read at once, as a server answers each request.
    fn echo_server(whole: bool) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            if whole {
                let mut got = Vec::new();
                conn.read_to_end(&mut got).unwrap();
                conn.write_all(&got).unwrap();
                return;
            }
            let mut buf = [0u8; 4096];
            loop {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => conn.write_all(&buf[..n]).unwrap(),
                }
            }
        });
        addr
    }

    fn pipe() -> (File, File) {
        let (reader, writer) = std::io::pipe().unwrap();
        (
            File::from(std::os::fd::OwnedFd::from(reader)),
            File::from(std::os::fd::OwnedFd::from(writer)),
        )
    }

    #[test]
    fn files_that_are_not_pipes_are_copied_and_the_answer_outlives_the_end_of_input() {
        let socket = TcpStream::connect(echo_server(true)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("from"), dir.path().join("to"));
        std::fs::write(&from, b"hello through the relay").unwrap();
        carry(
            socket,
            File::open(&from).unwrap(),
            File::create(&to).unwrap(),
        )
        .unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"hello through the relay");
    }

    /// The exec's case: pipes on the outside, a socket inside, 3 MiB (more
    /// than one splice) each way.
    #[test]
    fn pipes_and_a_socket_are_spliced_both_ways() {
        let socket = TcpStream::connect(echo_server(true)).unwrap();
        let (stdin_reader, mut stdin_writer) = pipe();
        let (mut stdout_reader, stdout_writer) = pipe();
        let data: Vec<u8> = (0..3 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        let feeder = std::thread::spawn(move || stdin_writer.write_all(&sent).unwrap());
        let relay = std::thread::spawn(move || carry(socket, stdin_reader, stdout_writer).unwrap());
        let mut out = Vec::new();
        stdout_reader.read_to_end(&mut out).unwrap();
        feeder.join().unwrap();
        relay.join().unwrap();
        assert_eq!(out.len(), data.len());
        assert!(out == data, "the bytes arrived changed");
    }

    /// A kept connection: a request, its answer read while the relay waits
    /// for the next request, then the next. A splice that blocked on the
    /// socket held the answer's pipe, and the first answer never came.
    #[test]
    fn requests_and_answers_take_turns_through_pipes() {
        let socket = TcpStream::connect(echo_server(false)).unwrap();
        let (stdin_reader, mut stdin_writer) = pipe();
        let (mut stdout_reader, stdout_writer) = pipe();
        std::thread::spawn(move || carry(socket, stdin_reader, stdout_writer));
        let (done, turns_done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for turn in ["first", "second", "third"] {
                stdin_writer.write_all(turn.as_bytes()).unwrap();
                let mut answer = vec![0u8; turn.len()];
                stdout_reader.read_exact(&mut answer).unwrap();
                assert_eq!(answer, turn.as_bytes());
            }
            done.send(()).unwrap();
        });
        turns_done
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("each answer reaches the reader before the next request is sent");
    }
}
