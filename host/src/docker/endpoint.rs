//! Which Docker engine to talk to, chosen the way the `docker` command
//! chooses it, so the computer lands where the user's own `docker ps` looks:
//!
//! 1. `DOCKER_HOST`;
//! 2. the context named by `DOCKER_CONTEXT`;
//! 3. `currentContext` in `config.json` of the Docker CLI's folder
//!    (`DOCKER_CONFIG`, else `~/.docker`);
//! 4. the platform default.
//!
//! The context `default` means step 4. A context's endpoint lives in
//! `contexts/meta/<sha256 of its name>/meta.json` of the same folder, and its
//! TLS files, if any, under `contexts/tls/<sha256>/docker/`.
//!
//! Transports: a Unix socket (`unix://`), a Windows named pipe (`npipe://`),
//! plain TCP (`tcp://`, `http://`), TLS ([`tls`]: `tcp://` with
//! `DOCKER_TLS_VERIFY`, `https://`, or a context with TLS files) and ssh
//! ([`ssh`]: `ssh://[user@]host[:port]`). TLS that skips checking
//! the engine's certificate (`DOCKER_TLS` alone, a context's
//! `SkipTLSVerify`) is refused: it would let anyone on the path run
//! containers as the user.

use super::error::{DockerError, EndpointError, Refusal};
use super::origin::{CertOrigin, EndpointSource, DEFAULT_CONTEXT};
use super::ssh::{self, SshTarget};
use super::tls::{self, TlsFiles};
use crate::settings::Env;
use bollard::{Docker, API_DEFAULT_VERSION};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[cfg(windows)]
pub const PLATFORM_DEFAULT: &str = "npipe:////./pipe/docker_engine";
#[cfg(not(windows))]
pub const PLATFORM_DEFAULT: &str = "unix:///var/run/docker.sock";

/// The ceiling bollard puts on any one request; each call site sets its own,
/// shorter deadline on top.
const REQUEST_CEILING_SECS: u64 = 120;
/// How long the first request (version negotiation) may take. A local engine
/// answers in milliseconds; this only catches a hung engine or a dead host.
const FIRST_CONTACT: Duration = Duration::from_secs(10);

/// A resolved Docker endpoint and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerEndpoint {
    /// The address as Docker writes it, such as `unix:///var/run/docker.sock`.
    pub host: String,
    pub transport: Transport,
    /// Where the address came from; `info` and errors show it.
    pub origin: EndpointSource,
    /// The Docker CLI's folder, where registry logins for pulls are kept.
    pub config_dir: Option<PathBuf>,
}

/// How to reach the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Unix(PathBuf),
    /// A pipe path such as `//./pipe/docker_engine`.
    NamedPipe(String),
    /// Plain HTTP to `host:port`.
    Http(String),
    /// HTTPS to `host:port` with a client certificate, checking the engine's
    /// certificate against the CA in `files`.
    Tls {
        authority: String,
        files: TlsFiles,
    },
    /// The system `ssh` running `docker system dial-stdio` on the remote
    /// machine.
    Ssh(SshTarget),
}

impl fmt::Display for Transport {
    /// What `info` and doctor say about the connection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Unix(_) => f.write_str("unix socket"),
            Transport::NamedPipe(_) => f.write_str("named pipe"),
            Transport::Http(_) => f.write_str("tcp, unencrypted"),
            Transport::Tls { files, .. } => write!(
                f,
                "tls, certificates in `{}` ({})",
                files.dir.display(),
                files.origin
            ),
            Transport::Ssh(target) => write!(f, "ssh, through `{target}`"),
        }
    }
}

impl fmt::Display for DockerEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({})", self.host, self.origin)
    }
}

/// Resolves the endpoint from `env`: `DOCKER_HOST`, `DOCKER_CONTEXT`,
/// `DOCKER_CONFIG`, `DOCKER_TLS_VERIFY`, and `HOME` (`USERPROFILE` on
/// Windows) to find `~/.docker`. Reads files but makes no Docker call.
pub fn resolve_endpoint(env: &Env) -> Result<DockerEndpoint, EndpointError> {
    let config_dir = config_dir(env);
    let mut endpoint = choose(env, config_dir.as_deref())?;
    endpoint.config_dir = config_dir;
    Ok(endpoint)
}

fn choose(env: &Env, config_dir: Option<&Path>) -> Result<DockerEndpoint, EndpointError> {
    if let Some(host) = var(env, "DOCKER_HOST") {
        let (mut endpoint, https) = parse_host(host, EndpointSource::DockerHost)?;
        // The CLI applies DOCKER_TLS_VERIFY and DOCKER_TLS (any value) to
        // DOCKER_HOST only, and only TCP can carry TLS.
        if let Transport::Http(authority) = &endpoint.transport {
            if https || var(env, "DOCKER_TLS_VERIFY").is_some() {
                let files = variable_tls_files(env, config_dir, host)?;
                files.check(host, &endpoint.origin)?;
                endpoint.transport = Transport::Tls {
                    authority: authority.clone(),
                    files,
                };
            } else if var(env, "DOCKER_TLS").is_some() {
                return Err(EndpointError::Refused {
                    host: host.to_string(),
                    origin: EndpointSource::DockerHost,
                    reason: Refusal::TlsWithoutVerify,
                });
            }
        }
        return Ok(endpoint);
    }
    if let Some(name) = var(env, "DOCKER_CONTEXT") {
        let origin = EndpointSource::ContextVariable {
            name: name.to_string(),
        };
        return context_endpoint(config_dir, name, origin);
    }
    if let Some(dir) = config_dir {
        let config = dir.join("config.json");
        if let Some(name) = current_context(&config)? {
            let origin = EndpointSource::CurrentContext {
                name: name.clone(),
                config,
            };
            return context_endpoint(Some(dir), &name, origin);
        }
    }
    platform_default(EndpointSource::PlatformDefault)
}

impl DockerEndpoint {
    /// A client for this endpoint, after one round trip that agrees on the
    /// API version (an engine older than bollard refuses newer requests).
    pub async fn connect(&self) -> Result<Docker, DockerError> {
        let unreachable = |source| DockerError::Unreachable {
            host: self.host.clone(),
            why: self.origin.to_string(),
            source,
        };
        let docker = self.client().map_err(unreachable)?;
        // ssh gets the connect timeout the docker CLI gives it, plus a
        // little for the login and the remote `docker` to start.
        let first_contact = match self.transport {
            Transport::Ssh(_) => Duration::from_secs(ssh::CONNECT_TIMEOUT_SECS + 5),
            _ => FIRST_CONTACT,
        };
        match tokio::time::timeout(first_contact, docker.negotiate_version()).await {
            Ok(Ok(docker)) => Ok(docker),
            Ok(Err(source)) => Err(unreachable(source)),
            Err(_) => Err(DockerError::EngineSilent {
                host: self.host.clone(),
                why: self.origin.to_string(),
                after: first_contact,
            }),
        }
    }

    fn client(&self) -> Result<Docker, bollard::errors::Error> {
        match &self.transport {
            Transport::Http(authority) => Docker::connect_with_http(
                &format!("http://{authority}"),
                REQUEST_CEILING_SECS,
                API_DEFAULT_VERSION,
            ),
            Transport::Tls { authority, files } => {
                tls::connect(authority, files, REQUEST_CEILING_SECS, API_DEFAULT_VERSION)
            }
            Transport::Ssh(target) => {
                ssh::connect(target, REQUEST_CEILING_SECS, API_DEFAULT_VERSION)
            }
            #[cfg(unix)]
            Transport::Unix(path) => Docker::connect_with_unix(
                &path.to_string_lossy(),
                REQUEST_CEILING_SECS,
                API_DEFAULT_VERSION,
            ),
            #[cfg(windows)]
            Transport::NamedPipe(pipe) => {
                Docker::connect_with_named_pipe(pipe, REQUEST_CEILING_SECS, API_DEFAULT_VERSION)
            }
            #[cfg(not(unix))]
            Transport::Unix(_) => Err(self.wrong_platform("Unix socket")),
            #[cfg(not(windows))]
            Transport::NamedPipe(_) => Err(self.wrong_platform("Windows named pipe")),
        }
    }

    /// bollard's own error for a transport this system lacks; the message
    /// names the endpoint so the user can fix DOCKER_HOST or the context.
    fn wrong_platform(&self, kind: &'static str) -> bollard::errors::Error {
        bollard::errors::Error::IOError {
            err: std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                EndpointError::WrongPlatform {
                    host: self.host.clone(),
                    origin: self.origin.clone(),
                    kind,
                }
                .to_string(),
            ),
        }
    }
}

/// The TLS files for DOCKER_HOST: `DOCKER_CERT_PATH`, else the Docker CLI's
/// folder, as the CLI picks them.
fn variable_tls_files(
    env: &Env,
    config_dir: Option<&Path>,
    host: &str,
) -> Result<TlsFiles, EndpointError> {
    if let Some(dir) = var(env, "DOCKER_CERT_PATH") {
        return Ok(TlsFiles {
            dir: PathBuf::from(dir),
            origin: CertOrigin::CertPathVariable,
        });
    }
    match config_dir {
        Some(dir) => Ok(TlsFiles {
            dir: dir.to_path_buf(),
            origin: CertOrigin::ConfigDir,
        }),
        None => Err(EndpointError::NoCertPath {
            host: host.to_string(),
        }),
    }
}

fn var<'a>(env: &'a Env, name: &str) -> Option<&'a str> {
    env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// The Docker CLI's folder: `DOCKER_CONFIG`, else `.docker` in the home
/// folder (as Go's `os.UserHomeDir` finds it). `None` when neither is known,
/// which leaves no current context to read.
fn config_dir(env: &Env) -> Option<PathBuf> {
    if let Some(dir) = var(env, "DOCKER_CONFIG") {
        return Some(PathBuf::from(dir));
    }
    let home = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    var(env, home).map(|h| Path::new(h).join(".docker"))
}

#[derive(Deserialize)]
struct CliConfig {
    #[serde(rename = "currentContext", default)]
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct ContextMeta {
    #[serde(rename = "Endpoints", default)]
    endpoints: HashMap<String, ContextEndpoint>,
}

#[derive(Deserialize)]
struct ContextEndpoint {
    #[serde(rename = "Host", default)]
    host: Option<String>,
    #[serde(rename = "SkipTLSVerify", default)]
    skip_tls_verify: bool,
}

fn current_context(config: &Path) -> Result<Option<String>, EndpointError> {
    let text = match std::fs::read_to_string(config) {
        Ok(text) => text,
        // No config file is the normal state of a fresh install.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(EndpointError::Read {
                path: config.to_path_buf(),
                source,
            })
        }
    };
    let parsed: CliConfig = serde_json::from_str(&text).map_err(|source| EndpointError::Parse {
        path: config.to_path_buf(),
        source,
    })?;
    Ok(parsed
        .current_context
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty()))
}

fn context_endpoint(
    config_dir: Option<&Path>,
    name: &str,
    origin: EndpointSource,
) -> Result<DockerEndpoint, EndpointError> {
    if name == DEFAULT_CONTEXT {
        return platform_default(origin);
    }
    let hash = context_hash(name);
    // Without a known folder the context cannot exist; report where it was
    // looked for as the relative path the CLI would use.
    let dir = config_dir.unwrap_or(Path::new(".docker"));
    let meta = dir
        .join("contexts")
        .join("meta")
        .join(&hash)
        .join("meta.json");
    let text = match std::fs::read_to_string(&meta) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(EndpointError::NoContext {
                name: name.to_string(),
                origin,
                meta,
            })
        }
        Err(source) => return Err(EndpointError::Read { path: meta, source }),
    };
    let parsed: ContextMeta =
        serde_json::from_str(&text).map_err(|source| EndpointError::Parse {
            path: meta.clone(),
            source,
        })?;
    let Some(docker) = parsed.endpoints.get("docker") else {
        return Err(EndpointError::NoHost {
            name: name.to_string(),
            origin,
            meta,
        });
    };
    let Some(host) = docker
        .host
        .as_deref()
        .map(str::trim)
        .filter(|h| !h.is_empty())
    else {
        return Err(EndpointError::NoHost {
            name: name.to_string(),
            origin,
            meta,
        });
    };
    let (mut endpoint, https) = parse_host(host, origin)?;
    let tls_dir = dir.join("contexts").join("tls").join(&hash).join("docker");
    // The CLI sets up TLS for a context with TLS files or SkipTLSVerify, and
    // TLS only ever applies to TCP.
    if let Transport::Http(authority) = &endpoint.transport {
        if docker.skip_tls_verify {
            return Err(EndpointError::Refused {
                host: host.to_string(),
                origin: endpoint.origin,
                reason: Refusal::ContextSkipsVerify,
            });
        }
        if https || tls::has_files(&tls_dir) {
            let files = TlsFiles {
                dir: tls_dir,
                origin: CertOrigin::Context,
            };
            files.check(host, &endpoint.origin)?;
            endpoint.transport = Transport::Tls {
                authority: authority.clone(),
                files,
            };
        }
    }
    Ok(endpoint)
}

/// Contexts are stored under the hex SHA-256 of their name.
fn context_hash(name: &str) -> String {
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The platform default, which never carries TLS.
fn platform_default(origin: EndpointSource) -> Result<DockerEndpoint, EndpointError> {
    parse_host(PLATFORM_DEFAULT, origin).map(|(endpoint, _)| endpoint)
}

/// The endpoint `host` names, and whether its scheme is `https://` (the
/// caller finds the TLS files, in the variables or the context).
fn parse_host(host: &str, origin: EndpointSource) -> Result<(DockerEndpoint, bool), EndpointError> {
    let malformed = |origin: EndpointSource| EndpointError::Malformed {
        host: host.to_string(),
        origin,
    };
    let Some((scheme, rest)) = host.split_once("://") else {
        return Err(malformed(origin));
    };
    let transport = match scheme.to_ascii_lowercase().as_str() {
        "unix" if rest.len() > 1 && rest.starts_with('/') => Transport::Unix(PathBuf::from(rest)),
        "npipe" if !rest.is_empty() => Transport::NamedPipe(rest.to_string()),
        "tcp" | "http" | "https" => {
            // Docker's default port for TCP, with or without TLS (as in the
            // CLI); an optional trailing `/`.
            let authority = rest.strip_suffix('/').unwrap_or(rest);
            let default_port = match scheme.to_ascii_lowercase().as_str() {
                "tcp" => 2375,
                "http" => 80,
                _ => 443,
            };
            Transport::Http(
                with_port(authority, default_port).ok_or_else(|| malformed(origin.clone()))?,
            )
        }
        "ssh" => {
            Transport::Ssh(
                SshTarget::parse(rest).map_err(|reason| EndpointError::BadSsh {
                    host: host.to_string(),
                    origin: origin.clone(),
                    reason,
                })?,
            )
        }
        _ => return Err(malformed(origin)),
    };
    let endpoint = DockerEndpoint {
        host: host.to_string(),
        transport,
        origin,
        config_dir: None,
    };
    Ok((endpoint, scheme.eq_ignore_ascii_case("https")))
}

/// `host:port`, adding the default port when none is given. `None` for an
/// empty host, a path, or a port that is not a number.
fn with_port(authority: &str, default_port: u16) -> Option<String> {
    if authority.is_empty() || authority.contains(['/', '?', '#', '@']) {
        return None;
    }
    // `[::1]:2375`, `[::1]`, `host:2375`, `host`.
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{inside}]"), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    if host.is_empty() || host == "[]" {
        return None;
    }
    let port = match port {
        None => default_port,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0)?,
    };
    Some(format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A Docker CLI folder in a temp dir, with contexts written like the CLI
    /// writes them.
    struct CliDir {
        dir: tempfile::TempDir,
    }

    impl CliDir {
        fn new() -> CliDir {
            CliDir {
                dir: tempfile::tempdir().unwrap(),
            }
        }
        fn path(&self) -> &Path {
            self.dir.path()
        }
        fn current(&self, name: &str) -> &CliDir {
            fs::write(
                self.path().join("config.json"),
                format!(r#"{{"auths":{{}},"currentContext":"{name}"}}"#),
            )
            .unwrap();
            self
        }
        fn context(&self, name: &str, host: &str, skip_tls_verify: bool) -> &CliDir {
            let dir = self.path().join("contexts/meta").join(context_hash(name));
            fs::create_dir_all(&dir).unwrap();
            let meta = serde_json::json!({
                "Name": name,
                "Metadata": {"Description": "test"},
                "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": skip_tls_verify}},
            });
            fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
            self
        }
        /// The context's TLS folder, as `docker context create` fills it.
        fn tls_files(&self, name: &str) -> PathBuf {
            let dir = self
                .path()
                .join("contexts/tls")
                .join(context_hash(name))
                .join("docker");
            write_tls_files(&dir);
            dir
        }
        fn env(&self, pairs: &[(&str, &str)]) -> Env {
            let mut env: Env = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            env.insert("DOCKER_CONFIG".into(), self.path().display().to_string());
            env
        }
    }

    fn resolve(env: &Env) -> DockerEndpoint {
        resolve_endpoint(env).unwrap_or_else(|e| panic!("resolve failed: {e}"))
    }

    #[test]
    fn hashes_context_names_like_the_cli() {
        // `docker context create colima` stores its meta under this folder.
        assert_eq!(
            context_hash("colima"),
            "f24fd3749c1368328e2b149bec149cb6795619f244c5b584e844961215dadd16"
        );
    }

    #[test]
    fn docker_host_comes_first() {
        let cli = CliDir::new();
        cli.context("colima", "unix:///colima.sock", false)
            .current("colima");
        let env = cli.env(&[
            ("DOCKER_HOST", "tcp://10.0.0.5:2375"),
            ("DOCKER_CONTEXT", "colima"),
        ]);
        let e = resolve(&env);
        assert_eq!(e.transport, Transport::Http("10.0.0.5:2375".into()));
        assert_eq!(e.origin, EndpointSource::DockerHost);
        assert_eq!(e.to_string(), "`tcp://10.0.0.5:2375` (from DOCKER_HOST)");
    }

    #[test]
    fn docker_context_beats_current_context() {
        let cli = CliDir::new();
        cli.context("colima", "unix:///colima.sock", false)
            .context("orbstack", "unix:///orb.sock", false)
            .current("orbstack");
        let e = resolve(&cli.env(&[("DOCKER_CONTEXT", "colima")]));
        assert_eq!(e.transport, Transport::Unix("/colima.sock".into()));
        assert_eq!(e.origin.to_string(), "from DOCKER_CONTEXT=colima");
    }

    #[test]
    fn current_context_from_config_json() {
        let cli = CliDir::new();
        cli.context("rancher-desktop", "unix:///rd.sock", false)
            .current("rancher-desktop");
        let e = resolve(&cli.env(&[]));
        assert_eq!(e.transport, Transport::Unix("/rd.sock".into()));
        assert_eq!(
            e.origin.to_string(),
            format!(
                "from currentContext `rancher-desktop` in `{}`",
                cli.path().join("config.json").display()
            )
        );
    }

    #[test]
    fn config_folder_defaults_to_dot_docker_in_home() {
        let home = tempfile::tempdir().unwrap();
        let dot_docker = home.path().join(".docker");
        fs::create_dir_all(
            dot_docker
                .join("contexts/meta")
                .join(context_hash("colima")),
        )
        .unwrap();
        fs::write(
            dot_docker
                .join("contexts/meta")
                .join(context_hash("colima"))
                .join("meta.json"),
            r#"{"Name":"colima","Endpoints":{"docker":{"Host":"unix:///home-colima.sock"}}}"#,
        )
        .unwrap();
        fs::write(
            dot_docker.join("config.json"),
            r#"{"currentContext":"colima"}"#,
        )
        .unwrap();
        let home_var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        let env: Env = [(home_var.to_string(), home.path().display().to_string())].into();
        assert_eq!(
            resolve(&env).transport,
            Transport::Unix("/home-colima.sock".into())
        );
    }

    #[test]
    fn platform_default_when_nothing_chooses() {
        let cli = CliDir::new();
        let e = resolve(&cli.env(&[]));
        assert_eq!(e.host, PLATFORM_DEFAULT);
        assert_eq!(e.origin, EndpointSource::PlatformDefault);
        // No home and no DOCKER_CONFIG: nothing to read, still the default.
        assert_eq!(resolve(&Env::new()).host, PLATFORM_DEFAULT);
        // Empty values count as unset, as in the CLI.
        let env = cli.env(&[("DOCKER_HOST", ""), ("DOCKER_CONTEXT", " ")]);
        assert_eq!(resolve(&env).origin, EndpointSource::PlatformDefault);
    }

    #[test]
    fn default_context_means_the_platform_default() {
        let cli = CliDir::new();
        cli.context("colima", "unix:///colima.sock", false)
            .current("colima");
        let e = resolve(&cli.env(&[("DOCKER_CONTEXT", "default")]));
        assert_eq!(e.host, PLATFORM_DEFAULT);
        assert_eq!(
            e.origin.to_string(),
            "from DOCKER_CONTEXT=default, the platform default"
        );
        let cli = CliDir::new();
        cli.current("default");
        assert_eq!(resolve(&cli.env(&[])).host, PLATFORM_DEFAULT);
    }

    #[test]
    fn parses_every_supported_scheme() {
        let cases = [
            (
                "unix:///var/run/docker.sock",
                Transport::Unix("/var/run/docker.sock".into()),
            ),
            (
                "npipe:////./pipe/docker_engine",
                Transport::NamedPipe("//./pipe/docker_engine".into()),
            ),
            (
                "tcp://127.0.0.1:2375",
                Transport::Http("127.0.0.1:2375".into()),
            ),
            (
                "tcp://docker.local",
                Transport::Http("docker.local:2375".into()),
            ),
            (
                "http://localhost:8080/",
                Transport::Http("localhost:8080".into()),
            ),
            ("http://localhost", Transport::Http("localhost:80".into())),
            ("tcp://[::1]:2375", Transport::Http("[::1]:2375".into())),
            ("tcp://[::1]", Transport::Http("[::1]:2375".into())),
        ];
        for (host, transport) in cases {
            let env: Env = [("DOCKER_HOST".to_string(), host.to_string())].into();
            assert_eq!(resolve(&env).transport, transport, "{host}");
        }
    }

    #[test]
    fn refuses_malformed_hosts() {
        for host in [
            "/var/run/docker.sock",
            "unix://",
            "tcp://",
            "tcp://host:port",
            "tcp://host:2375/v1",
            "fd://",
            "tcp://:2375",
        ] {
            let env: Env = [("DOCKER_HOST".to_string(), host.to_string())].into();
            let e = resolve_endpoint(&env).unwrap_err();
            assert!(matches!(e, EndpointError::Malformed { .. }), "{host}: {e}");
            assert_eq!(
                e.to_string(),
                format!("`{host}` (from DOCKER_HOST) is not a Docker address: use `unix:///path/to/docker.sock`, `npipe:////./pipe/docker_engine`, `tcp://host:port` (with DOCKER_TLS_VERIFY for TLS) or `ssh://[user@]host[:port]`")
            );
        }
    }

    /// PEM files of the right kinds; their contents are only checked by
    /// the TLS handshake, which the integration tests do.
    fn write_tls_files(dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        let pem = |label: &str| format!("-----BEGIN {label}-----\nAAAA\n-----END {label}-----\n");
        fs::write(dir.join("ca.pem"), pem("CERTIFICATE")).unwrap();
        fs::write(dir.join("cert.pem"), pem("CERTIFICATE")).unwrap();
        fs::write(dir.join("key.pem"), pem("PRIVATE KEY")).unwrap();
    }

    fn env_of(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn ssh_hosts_and_contexts() {
        let e = resolve(&env_of(&[("DOCKER_HOST", "ssh://me@box:2222")]));
        assert_eq!(
            e.transport,
            Transport::Ssh(SshTarget {
                user: Some("me".into()),
                host: "box".into(),
                port: Some(2222),
                socket: None,
            })
        );
        assert_eq!(
            e.transport.to_string(),
            "ssh, through `ssh -l me -p 2222 -o ConnectTimeout=30 -T -- box 'docker system dial-stdio'`"
        );
        // DOCKER_TLS_VERIFY never applies to ssh.
        let e = resolve(&env_of(&[
            ("DOCKER_HOST", "ssh://box"),
            ("DOCKER_TLS_VERIFY", "1"),
        ]));
        assert!(matches!(e.transport, Transport::Ssh(_)));
        let cli = CliDir::new();
        cli.context("remote-ssh", "ssh://me@box", false)
            .current("remote-ssh");
        assert!(matches!(
            resolve(&cli.env(&[])).transport,
            Transport::Ssh(_)
        ));
        let e = resolve_endpoint(&env_of(&[("DOCKER_HOST", "ssh://me:pw@box")])).unwrap_err();
        assert_eq!(e.to_string(), "`ssh://me:pw@box` (from DOCKER_HOST) is not a usable ssh address: a plain-text password is not supported; use a key or an ssh agent; write it as `ssh://[user@]host[:port]`");
    }

    #[test]
    fn tls_from_docker_tls_verify_and_cert_path() {
        let certs = tempfile::tempdir().unwrap();
        write_tls_files(certs.path());
        let cert_path = certs.path().display().to_string();
        // Any non-empty value turns verification on, as in the CLI.
        for verify in ["1", "0", "yes"] {
            let e = resolve(&env_of(&[
                ("DOCKER_HOST", "tcp://box:2376"),
                ("DOCKER_TLS_VERIFY", verify),
                ("DOCKER_CERT_PATH", &cert_path),
            ]));
            assert_eq!(
                e.transport,
                Transport::Tls {
                    authority: "box:2376".into(),
                    files: TlsFiles {
                        dir: certs.path().into(),
                        origin: CertOrigin::CertPathVariable
                    }
                }
            );
            assert_eq!(
                e.transport.to_string(),
                format!("tls, certificates in `{cert_path}` (from DOCKER_CERT_PATH)")
            );
        }
        // `https://` takes the same files, with or without the variable.
        let e = resolve(&env_of(&[
            ("DOCKER_HOST", "https://box"),
            ("DOCKER_CERT_PATH", &cert_path),
        ]));
        assert!(
            matches!(&e.transport, Transport::Tls { authority, .. } if authority == "box:443"),
            "{e:?}"
        );
        // No DOCKER_CERT_PATH: the Docker CLI's folder.
        let cli = CliDir::new();
        write_tls_files(cli.path());
        let e = resolve(&cli.env(&[
            ("DOCKER_HOST", "tcp://box:2376"),
            ("DOCKER_TLS_VERIFY", "1"),
        ]));
        assert_eq!(
            e.transport.to_string(),
            format!(
                "tls, certificates in `{}` (DOCKER_CERT_PATH is unset, so the Docker CLI's folder)",
                cli.path().display()
            )
        );
        // DOCKER_CERT_PATH alone does not turn TLS on, and a socket never
        // carries TLS.
        let e = resolve(&env_of(&[
            ("DOCKER_HOST", "tcp://box:2375"),
            ("DOCKER_CERT_PATH", &cert_path),
        ]));
        assert_eq!(e.transport, Transport::Http("box:2375".into()));
        let e = resolve(&env_of(&[
            ("DOCKER_HOST", "unix:///var/run/docker.sock"),
            ("DOCKER_TLS_VERIFY", "1"),
        ]));
        assert!(matches!(e.transport, Transport::Unix(_)));
    }

    #[test]
    fn names_a_missing_or_broken_tls_file() {
        let certs = tempfile::tempdir().unwrap();
        write_tls_files(certs.path());
        let cert_path = certs.path().display().to_string();
        let env = env_of(&[
            ("DOCKER_HOST", "tcp://box:2376"),
            ("DOCKER_TLS_VERIFY", "1"),
            ("DOCKER_CERT_PATH", &cert_path),
        ]);
        let fix = CertOrigin::CertPathVariable.fix();
        fs::remove_file(certs.path().join("cert.pem")).unwrap();
        assert_eq!(
            resolve_endpoint(&env).unwrap_err().to_string(),
            format!(
                "the Docker endpoint `tcp://box:2376` (from DOCKER_HOST) uses TLS, but `{}` (from DOCKER_CERT_PATH) is missing; {fix}",
                certs.path().join("cert.pem").display()
            )
        );
        write_tls_files(certs.path());
        fs::write(certs.path().join("key.pem"), "not a key").unwrap();
        let e = resolve_endpoint(&env).unwrap_err().to_string();
        assert!(e.contains("key.pem` (from DOCKER_CERT_PATH) holds no private key in PEM form; set DOCKER_CERT_PATH"), "{e}");
        fs::write(certs.path().join("ca.pem"), "").unwrap();
        let e = resolve_endpoint(&env).unwrap_err().to_string();
        assert!(
            e.contains("ca.pem` (from DOCKER_CERT_PATH) holds no certificate in PEM form"),
            "{e}"
        );
        // Without DOCKER_CERT_PATH, HOME or DOCKER_CONFIG nothing says where
        // the files are.
        let e = resolve_endpoint(&env_of(&[
            ("DOCKER_HOST", "tcp://box:2376"),
            ("DOCKER_TLS_VERIFY", "1"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("needs TLS files, but neither DOCKER_CERT_PATH"),
            "{e}"
        );
    }

    #[test]
    fn refuses_tls_that_does_not_verify() {
        let e = resolve_endpoint(&env_of(&[
            ("DOCKER_HOST", "tcp://box:2376"),
            ("DOCKER_TLS", "1"),
        ]))
        .unwrap_err();
        assert!(
            matches!(
                e,
                EndpointError::Refused {
                    reason: Refusal::TlsWithoutVerify,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().starts_with("the Docker endpoint `tcp://box:2376` (from DOCKER_HOST) asks for TLS without checking the engine's certificate"), "{e}");
        let cli = CliDir::new();
        cli.context("insecure", "tcp://box:2376", true);
        let e = resolve_endpoint(&cli.env(&[("DOCKER_CONTEXT", "insecure")]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("the Docker endpoint `tcp://box:2376` (from DOCKER_CONTEXT=insecure) skips checking the engine's certificate (`SkipTLSVerify` in the context)"), "{e}");
    }

    #[test]
    fn tls_contexts_use_their_own_files() {
        let cli = CliDir::new();
        cli.context("remote-tls", "tcp://box:2376", false).context(
            "plain",
            "tcp://box:2375",
            false,
        );
        let dir = cli.tls_files("remote-tls");
        let e = resolve(&cli.env(&[("DOCKER_CONTEXT", "remote-tls")]));
        assert_eq!(
            e.transport,
            Transport::Tls {
                authority: "box:2376".into(),
                files: TlsFiles {
                    dir: dir.clone(),
                    origin: CertOrigin::Context
                }
            }
        );
        assert_eq!(
            e.transport.to_string(),
            format!(
                "tls, certificates in `{}` (the context's TLS files)",
                dir.display()
            )
        );
        // DOCKER_TLS_VERIFY and DOCKER_CERT_PATH are for DOCKER_HOST only.
        let e = resolve(&cli.env(&[
            ("DOCKER_CONTEXT", "plain"),
            ("DOCKER_TLS_VERIFY", "1"),
            ("DOCKER_CERT_PATH", "/nowhere"),
        ]));
        assert_eq!(e.transport, Transport::Http("box:2375".into()));
        // A context with part of its files names the missing one.
        fs::remove_file(dir.join("key.pem")).unwrap();
        cli.current("remote-tls");
        let e = resolve_endpoint(&cli.env(&[])).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "`{}` (the context's TLS files) is missing; recreate the context",
                dir.join("key.pem").display()
            )),
            "{e}"
        );
        assert!(e.contains("(from currentContext `remote-tls` in"), "{e}");
    }

    #[test]
    fn missing_context_names_the_file() {
        let cli = CliDir::new();
        let e = resolve_endpoint(&cli.env(&[("DOCKER_CONTEXT", "nope")])).unwrap_err();
        let meta = cli
            .path()
            .join("contexts/meta")
            .join(context_hash("nope"))
            .join("meta.json");
        assert_eq!(
            e.to_string(),
            format!("the Docker context `nope` (from DOCKER_CONTEXT=nope) does not exist: `{}` is missing; run `docker context ls` and choose one that does", meta.display())
        );
    }

    #[test]
    fn context_without_docker_endpoint() {
        let cli = CliDir::new();
        let dir = cli.path().join("contexts/meta").join(context_hash("k8s"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("meta.json"), r#"{"Name":"k8s","Endpoints":{}}"#).unwrap();
        let e = resolve_endpoint(&cli.env(&[("DOCKER_CONTEXT", "k8s")])).unwrap_err();
        assert!(matches!(e, EndpointError::NoHost { .. }), "{e}");
        assert!(e.to_string().starts_with(
            "the Docker context `k8s` (from DOCKER_CONTEXT=k8s) has no Docker endpoint in"
        ));
    }

    #[test]
    fn broken_config_json_is_named() {
        let cli = CliDir::new();
        fs::write(cli.path().join("config.json"), "{not json").unwrap();
        let e = resolve_endpoint(&cli.env(&[])).unwrap_err().to_string();
        let config = cli.path().join("config.json");
        assert!(
            e.starts_with(&format!("`{}` is not valid JSON:", config.display())),
            "{e}"
        );
        assert!(
            e.ends_with("; fix the file, or set DOCKER_HOST to skip it"),
            "{e}"
        );
        // DOCKER_HOST never reads the file.
        assert!(resolve_endpoint(&cli.env(&[("DOCKER_HOST", "tcp://a:1")])).is_ok());
    }

    #[tokio::test]
    async fn connect_to_nothing_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let host = format!("unix://{}", dir.path().join("docker.sock").display());
        let env: Env = [("DOCKER_HOST".to_string(), host.clone())].into();
        let e = resolve(&env).connect().await.unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "cannot reach the Docker engine at `{host}` (from DOCKER_HOST):"
            )),
            "{e}"
        );
        assert!(
            e.ends_with(&format!(
                "; {}; {}",
                crate::docker::fix::ENGINE_UNREACHABLE,
                crate::docker::fix::RUN_DOCTOR
            )),
            "{e}"
        );
    }
}
