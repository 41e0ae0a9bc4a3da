//! Where the engine's settings came from, named in `info`, in doctor's
//! report and in every error about them, so the user knows which setting
//! to change: the endpoint ([`EndpointSource`]) and its TLS files
//! ([`CertOrigin`]).

use std::fmt;
use std::path::PathBuf;

/// The Docker CLI's name for the context that is the platform default.
pub const DEFAULT_CONTEXT: &str = "default";

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

/// Where the TLS files came from; `info` and doctor show it, and errors
/// say which setting to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertOrigin {
    /// `DOCKER_CERT_PATH`.
    CertPathVariable,
    /// `DOCKER_CERT_PATH` unset: the Docker CLI's folder (`DOCKER_CONFIG`,
    /// else `~/.docker`).
    ConfigDir,
    /// The context's own `contexts/tls/<hash>/docker/` folder.
    Context,
}

impl fmt::Display for CertOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CertOrigin::CertPathVariable => "from DOCKER_CERT_PATH",
            CertOrigin::ConfigDir => "DOCKER_CERT_PATH is unset, so the Docker CLI's folder",
            CertOrigin::Context => "the context's TLS files",
        })
    }
}

impl CertOrigin {
    /// How to put the right file in place.
    pub fn fix(&self) -> &'static str {
        match self {
            CertOrigin::CertPathVariable | CertOrigin::ConfigDir => "set DOCKER_CERT_PATH to the folder that holds the engine's `ca.pem` and your `cert.pem` and `key.pem` (`docker --tlsverify info` reads the same files)",
            CertOrigin::Context => "recreate the context with `docker context create <name> --docker \"host=tcp://…,ca=…,cert=…,key=…\"` (`docker --context <name> info` reads the same files)",
        }
    }
}
