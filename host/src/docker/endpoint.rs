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
//! Only plain transports are supported (`unix://`, `npipe://`, `tcp://`,
//! `http://`); TLS and ssh endpoints are refused with a message naming them.

use super::error::{DockerError, EndpointError, Refusal};
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
}

/// Where the endpoint came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointSource {
    DockerHost,
    /// The context named by `DOCKER_CONTEXT`.
    ContextVariable {
        name: String,
    },
    /// `currentContext` in the Docker CLI's `config.json`.
    CurrentContext {
        name: String,
        config: PathBuf,
    },
    /// Nothing chose an endpoint.
    PlatformDefault,
}

impl fmt::Display for EndpointSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointSource::DockerHost => f.write_str("from DOCKER_HOST"),
            EndpointSource::ContextVariable { name } => {
                write!(f, "from DOCKER_CONTEXT={name}")?;
                default_note(f, name)
            }
            EndpointSource::CurrentContext { name, config } => {
                write!(f, "from currentContext `{name}` in `{}`", config.display())?;
                default_note(f, name)
            }
            EndpointSource::PlatformDefault => f.write_str(
                "the platform default: no DOCKER_HOST, DOCKER_CONTEXT or currentContext",
            ),
        }
    }
}

fn default_note(f: &mut fmt::Formatter<'_>, context: &str) -> fmt::Result {
    if context == DEFAULT_CONTEXT {
        f.write_str(", the platform default")?;
    }
    Ok(())
}

impl fmt::Display for DockerEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({})", self.host, self.origin)
    }
}

const DEFAULT_CONTEXT: &str = "default";

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
        let endpoint = parse_host(host, EndpointSource::DockerHost)?;
        // The CLI applies DOCKER_TLS_VERIFY (any value) to DOCKER_HOST only,
        // and only TCP can carry TLS.
        if matches!(endpoint.transport, Transport::Http(_))
            && var(env, "DOCKER_TLS_VERIFY").is_some()
        {
            return Err(EndpointError::Refused {
                host: host.to_string(),
                origin: EndpointSource::DockerHost,
                reason: Refusal::TlsVerifyVariable,
            });
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
    parse_host(PLATFORM_DEFAULT, EndpointSource::PlatformDefault)
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
        match tokio::time::timeout(FIRST_CONTACT, docker.negotiate_version()).await {
            Ok(Ok(docker)) => Ok(docker),
            Ok(Err(source)) => Err(unreachable(source)),
            Err(_) => Err(DockerError::EngineSilent {
                host: self.host.clone(),
                why: self.origin.to_string(),
                after: FIRST_CONTACT,
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
        return parse_host(PLATFORM_DEFAULT, origin);
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
    let endpoint = parse_host(host, origin)?;
    let tls_dir = dir.join("contexts").join("tls").join(&hash).join("docker");
    let has_tls_files = std::fs::read_dir(&tls_dir).is_ok_and(|mut d| d.next().is_some());
    // The CLI sets up TLS for a context with TLS files or SkipTLSVerify, and
    // TLS only ever applies to TCP.
    if matches!(endpoint.transport, Transport::Http(_)) && (has_tls_files || docker.skip_tls_verify)
    {
        return Err(EndpointError::Refused {
            host: host.to_string(),
            origin: endpoint.origin,
            reason: Refusal::Tls,
        });
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

fn parse_host(host: &str, origin: EndpointSource) -> Result<DockerEndpoint, EndpointError> {
    let malformed = |origin: EndpointSource| EndpointError::Malformed {
        host: host.to_string(),
        origin,
    };
    let refused = |origin: EndpointSource, reason| EndpointError::Refused {
        host: host.to_string(),
        origin,
        reason,
    };
    let Some((scheme, rest)) = host.split_once("://") else {
        return Err(malformed(origin));
    };
    let transport = match scheme.to_ascii_lowercase().as_str() {
        "unix" if rest.len() > 1 && rest.starts_with('/') => Transport::Unix(PathBuf::from(rest)),
        "npipe" if !rest.is_empty() => Transport::NamedPipe(rest.to_string()),
        "tcp" | "http" => {
            // Docker's default port for plain TCP; an optional trailing `/`.
            let authority = rest.strip_suffix('/').unwrap_or(rest);
            let default_port = if scheme.eq_ignore_ascii_case("tcp") {
                2375
            } else {
                80
            };
            Transport::Http(
                with_port(authority, default_port).ok_or_else(|| malformed(origin.clone()))?,
            )
        }
        "https" => return Err(refused(origin, Refusal::Tls)),
        "ssh" => return Err(refused(origin, Refusal::Ssh)),
        _ => return Err(malformed(origin)),
    };
    Ok(DockerEndpoint {
        host: host.to_string(),
        transport,
        origin,
        config_dir: None,
    })
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
        fn tls_files(&self, name: &str) -> &CliDir {
            let dir = self
                .path()
                .join("contexts/tls")
                .join(context_hash(name))
                .join("docker");
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("ca.pem"), "-----BEGIN CERTIFICATE-----\n").unwrap();
            self
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
                format!("`{host}` (from DOCKER_HOST) is not a Docker address: use `unix:///path/to/docker.sock`, `npipe:////./pipe/docker_engine`, `tcp://host:port` or `http://host:port`")
            );
        }
    }

    const ADVICE: &str = "which computer-use-mcp does not support; use a Docker context with a socket (`docker context use <name>`) or set DOCKER_HOST to a `unix://`, `npipe://`, `tcp://` or `http://` address";

    #[test]
    fn refuses_ssh_and_https_hosts() {
        let env: Env = [("DOCKER_HOST".to_string(), "ssh://me@box".to_string())].into();
        assert_eq!(
            resolve_endpoint(&env).unwrap_err().to_string(),
            format!("the Docker endpoint `ssh://me@box` (from DOCKER_HOST) uses ssh, {ADVICE}")
        );
        let env: Env = [("DOCKER_HOST".to_string(), "https://box:2376".to_string())].into();
        assert_eq!(
            resolve_endpoint(&env).unwrap_err().to_string(),
            format!(
                "the Docker endpoint `https://box:2376` (from DOCKER_HOST) needs TLS, {ADVICE}"
            )
        );
    }

    #[test]
    fn refuses_docker_tls_verify_on_tcp() {
        let env: Env = [
            ("DOCKER_HOST".to_string(), "tcp://box:2376".to_string()),
            ("DOCKER_TLS_VERIFY".to_string(), "1".to_string()),
        ]
        .into();
        assert_eq!(
            resolve_endpoint(&env).unwrap_err().to_string(),
            format!("the Docker endpoint `tcp://box:2376` (from DOCKER_HOST) needs TLS because DOCKER_TLS_VERIFY is set, {ADVICE}")
        );
        // A socket never carries TLS, so the variable does not matter there.
        let env: Env = [
            (
                "DOCKER_HOST".to_string(),
                "unix:///var/run/docker.sock".to_string(),
            ),
            ("DOCKER_TLS_VERIFY".to_string(), "1".to_string()),
        ]
        .into();
        assert!(resolve_endpoint(&env).is_ok());
    }

    #[test]
    fn refuses_tls_and_ssh_contexts() {
        let cli = CliDir::new();
        cli.context("remote-tls", "tcp://box:2376", false)
            .tls_files("remote-tls")
            .context("insecure", "tcp://box:2376", true)
            .context("remote-ssh", "ssh://me@box", false)
            .context("plain", "tcp://box:2375", false);
        for (name, reason) in [
            ("remote-tls", "needs TLS"),
            ("insecure", "needs TLS"),
            ("remote-ssh", "uses ssh"),
        ] {
            let host = if name == "remote-ssh" {
                "ssh://me@box"
            } else {
                "tcp://box:2376"
            };
            assert_eq!(
                resolve_endpoint(&cli.env(&[("DOCKER_CONTEXT", name)]))
                    .unwrap_err()
                    .to_string(),
                format!(
                    "the Docker endpoint `{host}` (from DOCKER_CONTEXT={name}) {reason}, {ADVICE}"
                )
            );
        }
        assert_eq!(
            resolve(&cli.env(&[("DOCKER_CONTEXT", "plain")])).transport,
            Transport::Http("box:2375".into())
        );
        // A TLS context chosen by currentContext names the config file.
        cli.current("remote-tls");
        let e = resolve_endpoint(&cli.env(&[])).unwrap_err().to_string();
        assert!(e.contains("from currentContext `remote-tls` in"), "{e}");
        assert!(e.contains("needs TLS"), "{e}");
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
                crate::doctor::fix::ENGINE_UNREACHABLE,
                crate::doctor::fix::RUN_DOCTOR
            )),
            "{e}"
        );
    }
}
