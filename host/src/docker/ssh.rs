//! `ssh://` endpoints, reached the way the `docker` command reaches them: the
//! system `ssh` runs `docker system dial-stdio` on the remote machine, and
//! the Docker API is spoken over that process's stdin and stdout. Whatever
//! `ssh` itself is set up to do (`~/.ssh/config`, agents, jump hosts) then
//! works here too, on Linux, macOS and Windows alike.
//!
//! Each HTTP connection is one `ssh` process, and those processes share
//! one login where the user's ssh setup allows (`ssh_share.rs`). A
//! connection the engine left open is kept for a short while, so
//! consecutive calls reuse the process instead of starting another.
//! Upgraded connections (an attached exec) keep their process until they
//! are dropped, which kills it.

use crate::child_env::WithoutHostSecrets;
use bollard::{ClientVersion, Docker};
use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The `ConnectTimeout` the docker CLI gives `ssh`.
pub const CONNECT_TIMEOUT_SECS: u64 = 30;
/// How much of ssh's stderr is kept to explain a failure.
const STDERR_KEPT: usize = 4096;
/// How long a failed ssh gets to finish writing why before we report it.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// An `ssh://[user@]host[:port][/path/to/docker.sock]` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// The engine's socket on the remote machine, when not the default.
    pub socket: Option<String>,
}

/// Why what follows `ssh://` is not an address the docker CLI would take;
/// [`EndpointError::BadSsh`](super::EndpointError::BadSsh) adds the whole
/// address and its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshAddressError {
    #[error("fragments are not allowed: `#{fragment}`")]
    Fragment { fragment: String },
    #[error("query parameters are not allowed: `?{query}`")]
    Query { query: String },
    #[error("a plain-text password is not supported; use a key or an ssh agent")]
    Password,
    #[error("the user before `@` is empty")]
    EmptyUser,
    #[error("an IPv6 address needs its closing `]`")]
    UnclosedIpv6,
    #[error("`{after}` after the IPv6 address is not a port")]
    AfterIpv6 { after: String },
    #[error("the host name is empty")]
    EmptyHost,
    #[error("`{host}` is not a host name")]
    BadHost { host: String },
    #[error("`{port}` is not a port from 1 to 65535")]
    BadPort { port: String },
}

impl SshTarget {
    /// Parses what follows `ssh://`, with the docker CLI's rules: no
    /// password, no query, no fragment, a host that is not empty.
    pub fn parse(rest: &str) -> Result<SshTarget, SshAddressError> {
        if let Some((_, fragment)) = rest.split_once('#') {
            return Err(SshAddressError::Fragment {
                fragment: fragment.to_string(),
            });
        }
        if let Some((_, query)) = rest.split_once('?') {
            return Err(SshAddressError::Query {
                query: query.to_string(),
            });
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (user, host_port) = match authority.rsplit_once('@') {
            Some((user, host_port)) => {
                if user.contains(':') {
                    return Err(SshAddressError::Password);
                }
                if user.is_empty() {
                    return Err(SshAddressError::EmptyUser);
                }
                (Some(user.to_string()), host_port)
            }
            None => (None, authority),
        };
        let (host, port) = if let Some(inside) = host_port.strip_prefix('[') {
            let (host, after) = inside
                .split_once(']')
                .ok_or(SshAddressError::UnclosedIpv6)?;
            let port = match after {
                "" => None,
                _ => Some(
                    after
                        .strip_prefix(':')
                        .ok_or_else(|| SshAddressError::AfterIpv6 {
                            after: after.to_string(),
                        })?,
                ),
            };
            (host, port)
        } else {
            match host_port.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (host_port, None),
            }
        };
        if host.is_empty() {
            return Err(SshAddressError::EmptyHost);
        }
        if host.starts_with('-') || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(SshAddressError::BadHost {
                host: host.to_string(),
            });
        }
        let port = match port {
            None => None,
            Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| {
                SshAddressError::BadPort {
                    port: p.to_string(),
                }
            })?),
        };
        let socket = Some(path)
            .filter(|p| !p.trim_matches('/').is_empty())
            .map(str::to_string);
        Ok(SshTarget {
            user,
            host: host.to_string(),
            port,
            socket,
        })
    }

    /// The arguments of `ssh`, as the docker CLI's connection helper builds
    /// them: login and port, a connect timeout, no terminal, then the host
    /// and the remote command.
    pub fn ssh_args(&self) -> Vec<String> {
        let mut args = self.login_args();
        args.extend([
            "-o".to_string(),
            format!("ConnectTimeout={CONNECT_TIMEOUT_SECS}"),
            "-T".to_string(),
            "--".to_string(),
            self.host.clone(),
        ]);
        // ssh hands the remote command to the remote user's shell.
        let mut remote = vec!["docker".to_string()];
        if let Some(socket) = &self.socket {
            remote.push(shell_quote(&format!("--host=unix://{socket}")));
        }
        remote.extend(["system".to_string(), "dial-stdio".to_string()]);
        args.push(remote.join(" "));
        args
    }

    /// `-l user` and `-p port`, where the address names them.
    pub fn login_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(user) = &self.user {
            args.extend(["-l".to_string(), user.clone()]);
        }
        if let Some(port) = self.port {
            args.extend(["-p".to_string(), port.to_string()]);
        }
        args
    }
}

impl fmt::Display for SshTarget {
    /// The command line a person can paste to try the same connection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ssh")?;
        for arg in self.ssh_args() {
            if arg.contains(' ') {
                write!(f, " '{arg}'")?;
            } else {
                write!(f, " {arg}")?;
            }
        }
        Ok(())
    }
}

/// A word for a POSIX shell: as it is when it has nothing special in it,
/// else in single quotes.
fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A client for the engine behind `target`. No process starts until the
/// first request.
pub fn connect(
    target: &SshTarget,
    timeout_secs: u64,
    version: &ClientVersion,
) -> Result<Docker, bollard::errors::Error> {
    let connector = SshConnector {
        target: Arc::new(target.clone()),
        sharing: Arc::new(tokio::sync::OnceCell::new()),
    };
    // Only the path of each request reaches the engine; the host is a
    // placeholder, as in the docker CLI.
    super::pooled::pooled_docker(connector, "http://docker".into(), timeout_secs, version)
}

/// Starts one `ssh` per connection the HTTP client asks for, all sharing
/// one login where they can (`ssh_share.rs`).
#[derive(Clone)]
struct SshConnector {
    target: Arc<SshTarget>,
    /// The options that share the login, found at the first connection.
    sharing: Arc<tokio::sync::OnceCell<Vec<String>>>,
}

impl tower_service::Service<Uri> for SshConnector {
    type Response = TokioIo<SshStream>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Uri) -> Self::Future {
        let target = Arc::clone(&self.target);
        let sharing = Arc::clone(&self.sharing);
        Box::pin(async move {
            let sharing = sharing
                .get_or_init(|| super::ssh_share::options(target.login_args(), target.host.clone()))
                .await;
            SshStream::spawn(target.clone(), sharing).map(TokioIo::new)
        })
    }
}

/// The stdin and stdout of one `ssh … docker system dial-stdio`, as one
/// byte stream. When ssh ends before the engine said anything, reading or
/// writing fails with what ssh wrote on stderr.
struct SshStream {
    target: Arc<SshTarget>,
    /// `None` once the write half is shut down (stdin closed).
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    /// Shared with the task that drains stderr, and with `failure`.
    child: Arc<tokio::sync::Mutex<Child>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    /// Whether the engine sent any byte; only a silent ssh is a failure.
    answered: bool,
    failure: Option<Pin<Box<dyn Future<Output = io::Error> + Send>>>,
}

impl SshStream {
    fn spawn(target: Arc<SshTarget>, sharing: &[String]) -> io::Result<SshStream> {
        let mut command = Command::new("ssh");
        command
            .without_host_secrets()
            .args(sharing)
            .args(target.ssh_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(windows)]
        {
            // No console window flashes up for each connection.
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            command.creation_flags(CREATE_NO_WINDOW);
        }
        let mut child = command.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot run `ssh` for `ssh://` Docker endpoints: {e}; install the OpenSSH client (`apt-get install openssh-client`; on Windows, the OpenSSH Client optional feature) and check that `ssh` is on PATH"),
            )
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&stderr);
        let stderr_done = tokio::spawn(async move {
            let mut chunk = [0u8; 1024];
            while let Ok(n) = stderr_pipe.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                let mut kept = kept.lock();
                kept.extend_from_slice(&chunk[..n]);
                let excess = kept.len().saturating_sub(STDERR_KEPT);
                kept.drain(..excess);
            }
        });
        Ok(SshStream {
            target,
            stdin,
            stdout,
            child: Arc::new(tokio::sync::Mutex::new(child)),
            stderr,
            stderr_done: Some(stderr_done),
            answered: false,
            failure: None,
        })
    }

    /// The error for an ssh that ended (or broke its pipe) before the
    /// engine answered, once ssh has exited and said why.
    fn poll_failure(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if self.failure.is_none() {
            let child = Arc::clone(&self.child);
            let stderr = Arc::clone(&self.stderr);
            let stderr_done = self.stderr_done.take();
            let target = Arc::clone(&self.target);
            self.failure = Some(Box::pin(async move {
                let waited = tokio::time::timeout(EXIT_GRACE, async {
                    if let Some(done) = stderr_done {
                        let _ = done.await;
                    }
                    child.lock().await.wait().await.ok()
                })
                .await;
                let status = waited.ok().flatten();
                let said = String::from_utf8_lossy(&stderr.lock()).into_owned();
                io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    SshFailed {
                        command: target.to_string(),
                        status,
                        said: last_lines(&said),
                    }
                    .to_string(),
                )
            }));
        }
        self.failure.as_mut().expect("set above").as_mut().poll(cx)
    }
}

/// Why ssh gave no Docker connection, with what ssh said and what to check.
struct SshFailed {
    command: String,
    status: Option<ExitStatus>,
    said: String,
}

impl fmt::Display for SshFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ended", self.command)?;
        if let Some(code) = self.status.and_then(|s| s.code()) {
            write!(f, " with exit code {code}")?;
        }
        if self.said.is_empty() {
            f.write_str(" before the engine answered, and said nothing")?;
        } else {
            write!(f, " before the engine answered: {}", self.said)?;
        }
        let lower = self.said.to_ascii_lowercase();
        let fix = if lower.contains("docker: command not found")
            || lower.contains("docker: not found")
            || lower.contains("'docker' is not recognized")
        {
            "install Docker on the remote machine, and make sure `docker` is on PATH for commands run over ssh"
        } else if lower.contains("permission denied") {
            "let ssh log in without a prompt: add your key to the remote `~/.ssh/authorized_keys` and load it into your ssh agent, or name it with `IdentityFile` in `~/.ssh/config`"
        } else if lower.contains("host key verification failed") {
            "connect once with `ssh` from a terminal to check and accept the remote host key"
        } else {
            "run the same command in a terminal to see what fails: check the host name and port in DOCKER_HOST or the context, and `~/.ssh/config`"
        };
        write!(f, "; {fix}")
    }
}

/// The last two lines of ssh's stderr on one line: the reason is at the end,
/// after any banner or warnings.
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let start = lines.len().saturating_sub(2);
    lines[start..].join(" / ")
}

impl Connection for SshStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for SshStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.failure.is_some() {
            return this.poll_failure(cx).map(Err);
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.stdout).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            this.answered = true;
        } else if !this.answered {
            return this.poll_failure(cx).map(Err);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for SshStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.failure.is_some() {
            return this.poll_failure(cx).map(Err);
        }
        let Some(stdin) = this.stdin.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        };
        match ready!(Pin::new(stdin).poll_write(cx, data)) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe && !this.answered => {
                this.poll_failure(cx).map(Err)
            }
            other => Poll::Ready(other),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stdin.as_mut() {
            Some(stdin) => Pin::new(stdin).poll_flush(cx),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Closes ssh's stdin, which `dial-stdio` passes on as a half close:
    /// an attached exec then sees the end of its input.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(stdin) = self.stdin.as_mut() {
            ready!(Pin::new(stdin).poll_shutdown(cx))?;
        }
        self.stdin = None;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(rest: &str) -> SshTarget {
        SshTarget::parse(rest).unwrap_or_else(|e| panic!("{rest}: {e}"))
    }

    #[test]
    fn parses_the_forms_the_docker_cli_takes() {
        let t = parse("box");
        assert_eq!(
            (t.user, t.host.as_str(), t.port, t.socket),
            (None, "box", None, None)
        );
        let t = parse("me@box.example:2222");
        assert_eq!(t.user.as_deref(), Some("me"));
        assert_eq!(t.host, "box.example");
        assert_eq!(t.port, Some(2222));
        let t = parse("root@[fd00::2]:22/");
        assert_eq!(t.host, "fd00::2");
        assert_eq!(t.port, Some(22));
        assert_eq!(t.socket, None, "a bare `/` is no socket path");
        assert_eq!(parse("[::1]").host, "::1");
        let t = parse("me@box/run/user/1000/docker.sock");
        assert_eq!(t.socket.as_deref(), Some("/run/user/1000/docker.sock"));
        // A user name may hold `@`; the host is after the last one.
        assert_eq!(parse("a@b@box").user.as_deref(), Some("a@b"));
    }

    #[test]
    fn refuses_what_the_docker_cli_refuses() {
        for (rest, why) in [
            ("me:secret@box", "plain-text password"),
            ("box?x=1", "query parameters"),
            ("box#frag", "fragments"),
            ("", "host name is empty"),
            ("me@", "host name is empty"),
            ("me@:22", "host name is empty"),
            ("@box", "user before `@` is empty"),
            ("box:ssh", "`ssh` is not a port"),
            ("box:0", "`0` is not a port"),
            ("box:70000", "`70000` is not a port"),
            ("[::1", "closing `]`"),
            ("[::1]x", "not a port"),
            ("-oProxyCommand=x", "not a host name"),
            ("bad host", "not a host name"),
        ] {
            let e = SshTarget::parse(rest).unwrap_err().to_string();
            assert!(e.contains(why), "{rest}: {e}");
        }
    }

    #[test]
    fn builds_the_docker_cli_command() {
        assert_eq!(
            parse("box").ssh_args(),
            [
                "-o",
                "ConnectTimeout=30",
                "-T",
                "--",
                "box",
                "docker system dial-stdio"
            ]
        );
        assert_eq!(
            parse("me@box:2222").ssh_args(),
            [
                "-l",
                "me",
                "-p",
                "2222",
                "-o",
                "ConnectTimeout=30",
                "-T",
                "--",
                "box",
                "docker system dial-stdio"
            ]
        );
        assert_eq!(
            parse("box/var/run/my docker.sock")
                .ssh_args()
                .last()
                .unwrap(),
            "docker '--host=unix:///var/run/my docker.sock' system dial-stdio"
        );
        assert_eq!(
            parse("box/run/docker.sock").ssh_args().last().unwrap(),
            "docker --host=unix:///run/docker.sock system dial-stdio"
        );
        assert_eq!(
            parse("me@box").to_string(),
            "ssh -l me -o ConnectTimeout=30 -T -- box 'docker system dial-stdio'"
        );
    }

    #[test]
    fn quotes_for_the_remote_shell() {
        assert_eq!(shell_quote("plain-word_1.2"), "plain-word_1.2");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(x)"), "'$(x)'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn failure_quotes_ssh_and_says_what_to_fix() {
        let failed = |said: &str| {
            SshFailed {
                command: "ssh -T -- box 'docker system dial-stdio'".into(),
                status: None,
                said: last_lines(said),
            }
            .to_string()
        };
        let e = failed(
            "Warning: banner\n\nssh: Could not resolve hostname box: Name or service not known\n",
        );
        assert!(e.starts_with("`ssh -T -- box 'docker system dial-stdio'` ended before the engine answered: Warning: banner / ssh: Could not resolve hostname box"), "{e}");
        assert!(e.contains("check the host name"), "{e}");
        assert!(failed("bash: line 1: docker: command not found")
            .contains("install Docker on the remote machine"));
        assert!(failed("root@box: Permission denied (publickey).").contains("authorized_keys"));
        assert!(failed("").contains("said nothing"));
    }
}
