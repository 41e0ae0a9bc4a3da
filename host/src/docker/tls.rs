//! TLS to a Docker engine, decided the way the `docker` command decides it:
//! `DOCKER_HOST=tcp://…` with `DOCKER_TLS_VERIFY` set, or a context that
//! keeps TLS files. The client certificate, its key and the CA that signed
//! the engine's certificate are `cert.pem`, `key.pem` and `ca.pem` in one
//! folder. They are read and checked while the endpoint is resolved, so a
//! missing or broken file is named before any connection is tried.
//!
//! The cryptography is graviola's, pure Rust: the Windows and macOS binaries
//! then need no C compiler for their target. It runs on x86_64 and aarch64
//! CPUs with the AES and carry-less multiply instructions (x86_64 from about
//! 2014 on), and is checked before use rather than left to panic.
//!
//! The client is this module's, not bollard's `connect_with_ssl`: that one
//! opens a new connection (a TCP and a TLS handshake) for every request and
//! leaves Nagle's algorithm on, so each small write of a tunnel waited for
//! the engine's acknowledgement of the one before. Here idle connections
//! are kept for reuse, as the ssh client keeps its processes, and writes go
//! out at once.

use super::error::EndpointError;
use super::origin::{CertOrigin, EndpointSource};
use bollard::{ClientVersion, Docker};
use hyper_util::client::legacy::connect::HttpConnector;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};

/// The three files the Docker CLI uses, in the order it needs them.
pub const CA: &str = "ca.pem";
pub const CERT: &str = "cert.pem";
pub const KEY: &str = "key.pem";

/// The folder holding `ca.pem`, `cert.pem` and `key.pem`, and who chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub dir: PathBuf,
    pub origin: CertOrigin,
}

impl TlsFiles {
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// Reads and parses the three files, so that a missing, unreadable or
    /// wrong one is reported by name before any connection.
    pub fn check(&self, host: &str, origin: &EndpointSource) -> Result<(), EndpointError> {
        let bad = |file: &str, problem: String| EndpointError::TlsFile {
            host: host.to_string(),
            origin: origin.clone(),
            file: format!(
                "`{}` ({}) {problem}",
                self.path(file).display(),
                self.origin
            ),
            cert_origin: self.origin.clone(),
        };
        for file in [CA, CERT, KEY] {
            let bytes = std::fs::read(self.path(file)).map_err(|e| {
                let problem = match e.kind() {
                    std::io::ErrorKind::NotFound => "is missing".to_string(),
                    _ => format!("cannot be read ({e})"),
                };
                bad(file, problem)
            })?;
            if file == KEY {
                PrivateKeyDer::from_pem_slice(&bytes)
                    .map_err(|_| bad(file, "holds no private key in PEM form".into()))?;
            } else {
                let certs = CertificateDer::pem_slice_iter(&bytes)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(file, format!("is not valid PEM ({e})")))?;
                if certs.is_empty() {
                    return Err(bad(file, "holds no certificate in PEM form".into()));
                }
            }
        }
        Ok(())
    }
}

/// A client for the engine at `authority` (`host:port`) that proves itself
/// with `files`' certificate and trusts only the engine certificates their
/// CA signed, as `docker --tlsverify` does. No connection is made until the
/// first request.
pub fn connect(
    authority: &str,
    files: &TlsFiles,
    timeout_secs: u64,
    version: &ClientVersion,
) -> Result<Docker, bollard::errors::Error> {
    let io_error = |kind, why: TlsSetupError| bollard::errors::Error::IOError {
        err: std::io::Error::new(kind, why),
    };
    install_provider().map_err(|why| io_error(std::io::ErrorKind::Unsupported, why))?;
    let config =
        client_config(files).map_err(|why| io_error(std::io::ErrorKind::InvalidData, why))?;
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .wrap_connector(tcp);
    super::pooled::pooled_docker(
        connector,
        format!("https://{authority}"),
        timeout_secs,
        version,
    )
}

/// Why TLS to the engine cannot be set up; each names the file or the CPU.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error("`{}` cannot be read as PEM certificates: {reason}", path.display())]
    Certificates { path: PathBuf, reason: String },
    #[error("`{}` holds no CA certificate rustls can use", path.display())]
    NoCa { path: PathBuf },
    #[error("`{}` holds no usable private key: {reason}", path.display())]
    NoKey { path: PathBuf, reason: String },
    #[error("`{}` and `{}` do not make a client certificate: {reason}", cert.display(), key.display())]
    NotAPair {
        cert: PathBuf,
        key: PathBuf,
        reason: String,
    },
    #[error("{0}; reach this engine over ssh instead (`DOCKER_HOST=ssh://user@host`)")]
    Cpu(&'static str),
}

/// The TLS settings from the three files; the error names the file.
fn client_config(files: &TlsFiles) -> Result<rustls::ClientConfig, TlsSetupError> {
    let certs = |file: &str| {
        CertificateDer::pem_file_iter(files.path(file))
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| TlsSetupError::Certificates {
                path: files.path(file),
                reason: e.to_string(),
            })
    };
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(certs(CA)?);
    if added == 0 {
        return Err(TlsSetupError::NoCa {
            path: files.path(CA),
        });
    }
    let key = PrivateKeyDer::from_pem_file(files.path(KEY)).map_err(|e| TlsSetupError::NoKey {
        path: files.path(KEY),
        reason: e.to_string(),
    })?;
    rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_client_auth_cert(certs(CERT)?, key)
        .map_err(|e| TlsSetupError::NotAPair {
            cert: files.path(CERT),
            key: files.path(KEY),
            reason: e.to_string(),
        })
}

/// Makes graviola the process's rustls provider, once. bollard's TLS client
/// takes the process default. An error when this CPU or architecture cannot
/// run it, instead of graviola's panic.
pub fn install_provider() -> Result<(), TlsSetupError> {
    cpu_supported()?;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        // Err means another provider is already installed, which serves too.
        let _ = rustls_graviola::default_provider().install_default();
    }
    Ok(())
}

fn cpu_supported() -> Result<(), TlsSetupError> {
    #[cfg(target_arch = "x86_64")]
    {
        let ok = std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("adx")
            && std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("avx2");
        if !ok {
            return Err(TlsSetupError::Cpu("TLS in computer-use-mcp needs an x86_64 CPU with AES-NI, PCLMULQDQ, BMI1/2, ADX and AVX2 (made since about 2014), which this one lacks"));
        }
        Ok(())
    }
    #[cfg(target_arch = "aarch64")]
    {
        let ok = std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
            && std::arch::is_aarch64_feature_detected!("sha2")
            && std::arch::is_aarch64_feature_detected!("neon");
        if !ok {
            return Err(TlsSetupError::Cpu("TLS in computer-use-mcp needs an arm64 CPU with the AES, PMULL and SHA2 instructions, which this one lacks"));
        }
        Ok(())
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err(TlsSetupError::Cpu(
            "TLS in computer-use-mcp runs on x86_64 and arm64 only",
        ))
    }
}

/// Whether `dir` holds any file: the CLI turns TLS on for a context whose
/// TLS folder is not empty.
pub fn has_files(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}
