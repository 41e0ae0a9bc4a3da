//! Registry logins for pulling the image. The engine keeps no logins: the
//! `docker` command reads them from its `config.json` (or a credential
//! helper) and sends them with each pull, so the host does the same, which
//! makes `docker login ghcr.io` enough for a private image.

use super::error::DockerError;
use crate::child_env::WithoutHostSecrets;
use base64::Engine;
use bollard::auth::DockerCredentials;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// The key Docker Hub logins are stored under.
const DOCKER_HUB: &str = "https://index.docker.io/v1/";
/// A credential helper may ask the OS keychain; it answers in well under this.
const HELPER_DEADLINE: Duration = Duration::from_secs(15);

#[derive(Debug, Default, Deserialize)]
struct CliConfig {
    #[serde(default)]
    auths: HashMap<String, FileAuth>,
    #[serde(rename = "credsStore", default)]
    creds_store: Option<String>,
    #[serde(rename = "credHelpers", default)]
    cred_helpers: HashMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
struct FileAuth {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    identitytoken: Option<String>,
}

/// Where a login for a registry comes from.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    /// `docker-credential-<name>`.
    Helper(String),
    /// `auths` in `config.json`.
    File,
}

/// The registry an image reference points at, as the CLI keys its logins:
/// `ghcr.io`, `localhost:5000`, or Docker Hub.
pub(crate) fn registry_of(image: &str) -> String {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first.to_string(),
        _ => DOCKER_HUB.to_string(),
    }
}

/// The login for the registry of `image`, if the user has one. `config_dir`
/// is the Docker CLI's folder; without it there is no login to find.
pub(crate) async fn for_image(
    config_dir: Option<&Path>,
    image: &str,
) -> Result<Option<DockerCredentials>, DockerError> {
    let registry = registry_of(image);
    let Some(dir) = config_dir else {
        return Ok(None);
    };
    let config: CliConfig = match std::fs::read_to_string(dir.join("config.json")) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| DockerError::Credentials {
            registry: registry.clone(),
            reason: format!(
                "`{}` is not valid JSON: {e}",
                dir.join("config.json").display()
            ),
        })?,
        Err(_) => return Ok(None),
    };
    match source_for(&config, &registry) {
        Some(Source::Helper(helper)) => from_helper(&helper, &registry).await,
        Some(Source::File) => from_file(&config, &registry),
        None => Ok(None),
    }
}

/// The CLI's order: a per-registry helper, the default store, the file.
fn source_for(config: &CliConfig, registry: &str) -> Option<Source> {
    if let Some(helper) = config.cred_helpers.get(registry).filter(|h| !h.is_empty()) {
        return Some(Source::Helper(helper.clone()));
    }
    if let Some(store) = config.creds_store.as_ref().filter(|s| !s.is_empty()) {
        return Some(Source::Helper(store.clone()));
    }
    file_entry(config, registry).map(|_| Source::File)
}

/// Entries may be written as `ghcr.io` or `https://ghcr.io/`.
fn file_entry<'a>(config: &'a CliConfig, registry: &str) -> Option<&'a FileAuth> {
    config.auths.get(registry).or_else(|| {
        config
            .auths
            .iter()
            .find(|(key, _)| bare_host(key) == bare_host(registry))
            .map(|(_, v)| v)
    })
}

fn bare_host(key: &str) -> &str {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

fn from_file(config: &CliConfig, registry: &str) -> Result<Option<DockerCredentials>, DockerError> {
    let Some(entry) = file_entry(config, registry) else {
        return Ok(None);
    };
    let bad = |reason: &str| DockerError::Credentials {
        registry: registry.to_string(),
        reason: reason.to_string(),
    };
    if let Some(token) = entry.identitytoken.as_ref().filter(|t| !t.is_empty()) {
        return Ok(Some(DockerCredentials {
            identitytoken: Some(token.clone()),
            serveraddress: Some(registry.to_string()),
            ..Default::default()
        }));
    }
    let Some(auth) = entry.auth.as_ref().filter(|a| !a.is_empty()) else {
        return Ok(None);
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth.trim())
        .map_err(|_| bad("its `auth` entry in config.json is not base64"))?;
    let text = String::from_utf8(decoded)
        .map_err(|_| bad("its `auth` entry in config.json is not text"))?;
    let (user, password) = text
        .split_once(':')
        .ok_or_else(|| bad("its `auth` entry in config.json is not `user:password`"))?;
    Ok(Some(DockerCredentials {
        username: Some(user.to_string()),
        password: Some(password.to_string()),
        serveraddress: Some(registry.to_string()),
        ..Default::default()
    }))
}

#[derive(Deserialize)]
struct HelperAnswer {
    #[serde(rename = "Username")]
    username: String,
    #[serde(rename = "Secret")]
    secret: String,
}

/// Asks `docker-credential-<helper> get`, as the CLI does. "Not found" is no
/// login, not an error: a public image needs none.
async fn from_helper(
    helper: &str,
    registry: &str,
) -> Result<Option<DockerCredentials>, DockerError> {
    let program = format!("docker-credential-{helper}");
    let bad = |reason: String| DockerError::Credentials {
        registry: registry.to_string(),
        reason,
    };
    let mut child = tokio::process::Command::new(&program)
        .without_host_secrets()
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            bad(format!(
                "cannot run `{program}` (the credential helper in config.json): {e}"
            ))
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(registry.as_bytes())
            .await
            .map_err(|e| bad(format!("`{program}` did not take the registry name: {e}")))?;
    }
    let output = tokio::time::timeout(HELPER_DEADLINE, child.wait_with_output())
        .await
        .map_err(|_| {
            bad(format!(
                "`{program}` did not answer within {}s",
                HELPER_DEADLINE.as_secs()
            ))
        })?
        .map_err(|e| bad(format!("`{program}` failed: {e}")))?;
    if !output.status.success() {
        // Helpers print "credentials not found ..." and fail when there is no
        // login for the registry.
        return Ok(None);
    }
    let answer: HelperAnswer = serde_json::from_slice(&output.stdout).map_err(|e| {
        bad(format!(
            "`{program}` gave an answer that is not its JSON: {e}"
        ))
    })?;
    // Helpers return an identity token with this placeholder user.
    let credentials = if answer.username == "<token>" {
        DockerCredentials {
            identitytoken: Some(answer.secret),
            serveraddress: Some(registry.to_string()),
            ..Default::default()
        }
    } else {
        DockerCredentials {
            username: Some(answer.username),
            password: Some(answer.secret),
            serveraddress: Some(registry.to_string()),
            ..Default::default()
        }
    };
    Ok(Some(credentials))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> CliConfig {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn finds_the_registry_of_an_image() {
        assert_eq!(
            registry_of("ghcr.io/falleng0d/computer-use-mcp:0.1.0"),
            "ghcr.io"
        );
        assert_eq!(registry_of("localhost:5000/computer:dev"), "localhost:5000");
        assert_eq!(registry_of("localhost/computer"), "localhost");
        assert_eq!(registry_of("computer-use-mcp:dev"), DOCKER_HUB);
        assert_eq!(registry_of("library/debian:trixie"), DOCKER_HUB);
    }

    #[test]
    fn follows_the_cli_order() {
        let c = config(
            r#"{"auths":{"ghcr.io":{}},"credsStore":"desktop","credHelpers":{"ghcr.io":"osxkeychain"}}"#,
        );
        assert_eq!(
            source_for(&c, "ghcr.io"),
            Some(Source::Helper("osxkeychain".into()))
        );
        assert_eq!(
            source_for(&c, "quay.io"),
            Some(Source::Helper("desktop".into()))
        );
        let c = config(r#"{"auths":{"https://ghcr.io":{"auth":"dTpw"}}}"#);
        assert_eq!(source_for(&c, "ghcr.io"), Some(Source::File));
        assert_eq!(source_for(&c, "quay.io"), None);
    }

    #[test]
    fn decodes_file_logins() {
        // "octocat:ghp_secret"
        let c = config(r#"{"auths":{"ghcr.io":{"auth":"b2N0b2NhdDpnaHBfc2VjcmV0"}}}"#);
        let creds = from_file(&c, "ghcr.io").unwrap().unwrap();
        assert_eq!(creds.username.as_deref(), Some("octocat"));
        assert_eq!(creds.password.as_deref(), Some("ghp_secret"));
        assert_eq!(creds.serveraddress.as_deref(), Some("ghcr.io"));
        let c = config(r#"{"auths":{"ghcr.io":{"identitytoken":"tok"}}}"#);
        assert_eq!(
            from_file(&c, "ghcr.io")
                .unwrap()
                .unwrap()
                .identitytoken
                .as_deref(),
            Some("tok")
        );
        let c = config(r#"{"auths":{"ghcr.io":{"auth":"!!!"}}}"#);
        assert_eq!(
            from_file(&c, "ghcr.io").unwrap_err().to_string(),
            "cannot use the registry login for `ghcr.io`: its `auth` entry in config.json is not base64; run `docker login ghcr.io` again"
        );
    }

    #[tokio::test]
    async fn no_config_means_no_login() {
        let dir = tempfile::tempdir().unwrap();
        assert!(for_image(Some(dir.path()), "ghcr.io/a/b:1")
            .await
            .unwrap()
            .is_none());
        assert!(for_image(None, "ghcr.io/a/b:1").await.unwrap().is_none());
    }
}
