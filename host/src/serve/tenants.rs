//! `COMPUTER_USE_HTTP_TENANTS`: a file naming who may use an HTTP server,
//! one `NAME TOKEN` line each, every tenant with a computer of its own.
//! Blank lines and lines starting with `#` are skipped. The file holds
//! secrets, so one that its group or others may read refuses the start.
//!
//! A line may go on with `VARIABLE=VALUE` fields that set the tenant's
//! network policy, with the variables and values the server takes
//! ([`NETWORK_VARIABLES`]); what a line leaves out comes from the server's
//! own settings. The policies are read again when the file changes
//! (`super::policy_watch`).

use super::guard::TOKEN_MIN_CHARS;
use crate::settings::{network_policy, Env};
use computer_protocol::network::{self, NetworkPolicy};
use computer_protocol::Hidden;
use std::path::Path;

/// The settings a tenant's line may give it, each as the server's
/// variable of the same name.
pub const NETWORK_VARIABLES: [&str; 5] = [
    network::EGRESS,
    network::EGRESS_ALLOW,
    network::EGRESS_PRIVATE,
    network::HOST_PORTS,
    network::EGRESS_DNS,
];

/// A line's setting that names the home its tenant may use, by the key
/// the home was made with (see [`home_key`]): for a tenant whose token
/// changed but who is the same person.
pub const TENANT_HOME_VAR: &str = "COMPUTER_USE_TENANT_HOME";
/// Hex characters in a home key.
const HOME_KEY_CHARS: usize = 16;

/// The variable naming the tenants file.
pub const TENANTS_VAR: &str = "COMPUTER_USE_HTTP_TENANTS";
/// The longest tenant name: it becomes part of a container name.
pub const NAME_MAX_CHARS: usize = 32;

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantEntry {
    pub name: String,
    pub token: Hidden<String>,
    /// The line of the file, for errors found later.
    pub line: usize,
    /// `VARIABLE=VALUE` fields, each variable one of [`NETWORK_VARIABLES`].
    pub network: Vec<(&'static str, String)>,
    /// [`TENANT_HOME_VAR`], when the line gives it.
    pub home: Option<String>,
}

impl TenantEntry {
    /// The key this tenant's home must carry: the one the line names, or
    /// its token's.
    pub fn home_key(&self) -> String {
        self.home
            .clone()
            .unwrap_or_else(|| home_key(self.token.expose()))
    }
}

/// A tenant's home is labelled with this key, made from the token it was
/// made for, so that a name given to someone new (with a new token) does
/// not hand them the old tenant's home: the first 16 hex digits of the
/// token's SHA-256, which tell nothing of the token.
pub fn home_key(token: &str) -> String {
    let mut key = computer_protocol::handoff::handback_digest(token);
    key.truncate(HOME_KEY_CHARS);
    key
}

impl TenantEntry {
    /// The tenant's network policy: its line's fields over the server's
    /// settings in `server`. `None` when the line sets nothing, so the
    /// server's policy applies as it is at each start.
    pub fn network_policy(
        &self,
        path: &str,
        server: &Env,
    ) -> Result<Option<NetworkPolicy>, TenantsError> {
        if self.network.is_empty() {
            return Ok(None);
        }
        let mut env = server.clone();
        for (variable, value) in &self.network {
            env.insert(variable.to_string(), value.clone());
        }
        network_policy(&env)
            .map(Some)
            .map_err(|e| TenantsError::BadLine {
                path: path.to_string(),
                line: self.line,
                why: format!(
                    "the tenant `{}` has {}=`{}`, but {}",
                    self.name, e.name, e.value, e.expected
                ),
            })
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TenantsError {
    #[error("cannot read `{path}` (`{TENANTS_VAR}`): {reason}")]
    Unreadable { path: String, reason: String },
    #[error("`{path}` (`{TENANTS_VAR}`) holds tokens but has mode {mode:04o}, so others on this machine may read it: run `chmod 600 {path}`")]
    OpenToOthers { path: String, mode: u32 },
    #[error("`{path}` (`{TENANTS_VAR}`) line {line}: {why}; each line is `NAME TOKEN [VARIABLE=VALUE ...]`, the name of 1 to {NAME_MAX_CHARS} characters from a-z, 0-9 and `-`, the token of at least {TOKEN_MIN_CHARS} characters (for example `alice $(openssl rand -hex 32)`), the optional fields network settings (`COMPUTER_USE_EGRESS=allowlist COMPUTER_USE_EGRESS_ALLOW=example.com`)")]
    BadLine {
        path: String,
        line: usize,
        why: String,
    },
    #[error("`{path}` (`{TENANTS_VAR}`) names no tenant: add a line `NAME TOKEN` for each")]
    Empty { path: String },
}

/// Reads and checks the tenants file at `path`.
pub fn read_tenants(path: &Path) -> Result<Vec<TenantEntry>, TenantsError> {
    let shown = path.display().to_string();
    let unreadable = |e: std::io::Error| TenantsError::Unreadable {
        path: shown.clone(),
        reason: e.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    check_mode(&shown, &meta)?;
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    parse_tenants(&shown, &text)
}

#[cfg(unix)]
fn check_mode(path: &str, meta: &std::fs::Metadata) -> Result<(), TenantsError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(TenantsError::OpenToOthers {
            path: path.to_string(),
            mode,
        });
    }
    Ok(())
}

/// Windows has no mode bits; the file's ACL is the operator's to set.
#[cfg(not(unix))]
fn check_mode(_: &str, _: &std::fs::Metadata) -> Result<(), TenantsError> {
    Ok(())
}

/// The tenants in `text`, the file at `path`.
pub fn parse_tenants(path: &str, text: &str) -> Result<Vec<TenantEntry>, TenantsError> {
    let mut tenants: Vec<TenantEntry> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: String| TenantsError::BadLine {
            path: path.to_string(),
            line: index + 1,
            why,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, token, ref settings @ ..] = fields[..] else {
            return Err(bad(format!(
                "it has {} field instead of at least 2",
                fields.len()
            )));
        };
        let mut network = Vec::new();
        let mut home = None;
        for field in settings {
            let (variable, value) = field.split_once('=').unwrap_or((field, ""));
            if variable == TENANT_HOME_VAR {
                let hex = value.len() == HOME_KEY_CHARS
                    && value
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                if !hex || home.is_some() {
                    return Err(bad(format!(
                        "`{field}`: give {TENANT_HOME_VAR} once, as the {HOME_KEY_CHARS} hex digits of the home's key that computer-use-mcp named"
                    )));
                }
                home = Some(value.to_string());
                continue;
            }
            let Some(known) = NETWORK_VARIABLES.iter().find(|v| **v == variable) else {
                return Err(bad(format!(
                    "`{field}` is not a `VARIABLE=VALUE` setting of one of {}, {TENANT_HOME_VAR}",
                    NETWORK_VARIABLES.join(", ")
                )));
            };
            if network.iter().any(|(v, _)| v == known) {
                return Err(bad(format!("{variable} is set twice")));
            }
            network.push((*known, value.to_string()));
        }
        if !valid_name(name) {
            return Err(bad(format!(
                "the name `{name}` is not 1 to {NAME_MAX_CHARS} characters from a-z, 0-9 and `-`"
            )));
        }
        let chars = token.chars().count();
        if chars < TOKEN_MIN_CHARS {
            return Err(bad(format!(
                "the token of `{name}` has {chars} characters, fewer than {TOKEN_MIN_CHARS}"
            )));
        }
        if tenants.iter().any(|t| t.name == name) {
            return Err(bad(format!("the name `{name}` is already used above")));
        }
        if tenants.iter().any(|t| t.token.expose() == token) {
            return Err(bad(format!(
                "the token of `{name}` is already another tenant's"
            )));
        }
        tenants.push(TenantEntry {
            name: name.to_string(),
            token: Hidden::new(token.to_string()),
            line: index + 1,
            network,
            home,
        });
    }
    if tenants.is_empty() {
        return Err(TenantsError::Empty {
            path: path.to_string(),
        });
    }
    Ok(tenants)
}

fn valid_name(name: &str) -> bool {
    (1..=NAME_MAX_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn why(text: &str) -> String {
        parse_tenants("t", text).unwrap_err().to_string()
    }

    #[test]
    fn reads_names_and_tokens_skipping_comments() {
        let text = format!("# team\n\nalice {A}\n  bob-2   {B}  \n");
        let tenants = parse_tenants("t", &text).unwrap();
        let names: Vec<_> = tenants.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["alice", "bob-2"]);
        assert_eq!(tenants[1].token.expose(), B);
        // Tokens never show in debug output.
        assert!(!format!("{tenants:?}").contains(A));
    }

    #[test]
    fn bad_lines_name_the_line_and_the_rule() {
        assert!(why(&format!("Alice {A}")).contains("line 1: the name `Alice`"));
        assert!(why(&format!("{} {A}", "a".repeat(33))).contains("not 1 to 32"));
        assert!(why("alice short").contains("fewer than 32"));
        assert!(why("alice").contains("1 field instead of at least 2"));
        assert!(why(&format!("alice {A} extra")).contains("`extra` is not a `VARIABLE=VALUE`"));
        assert!(why(&format!("alice {A} COMPUTER_USE_NAME=x")).contains("COMPUTER_USE_EGRESS_DNS"));
        assert!(why(&format!(
            "alice {A} COMPUTER_USE_EGRESS=none COMPUTER_USE_EGRESS=open"
        ))
        .contains("COMPUTER_USE_EGRESS is set twice"));
        assert!(why(&format!("alice {A}\nalice {B}"))
            .contains("line 2: the name `alice` is already used"));
        assert!(why(&format!("alice {A}\nbob {A}")).contains("already another tenant's"));
        assert!(why("# nobody\n").contains("names no tenant"));
    }

    #[test]
    fn a_home_key_comes_from_the_token_unless_the_line_names_one() {
        let text = format!("alice {A}\nbob {B} COMPUTER_USE_TENANT_HOME=0123456789abcdef\n");
        let tenants = parse_tenants("t", &text).unwrap();
        assert_eq!(tenants[0].home_key(), home_key(A));
        assert_eq!(home_key(A).len(), 16);
        assert_ne!(home_key(A), home_key(B));
        assert_eq!(tenants[1].home_key(), "0123456789abcdef");
        for bad in ["xyz", "0123456789ABCDEF", "0123456789abcde"] {
            let e = why(&format!("alice {A} COMPUTER_USE_TENANT_HOME={bad}"));
            assert!(e.contains("16 hex digits"), "{e}");
        }
    }

    #[test]
    fn a_line_sets_the_tenants_network_over_the_servers() {
        let text = format!(
            "alice {A} COMPUTER_USE_EGRESS=allowlist COMPUTER_USE_EGRESS_ALLOW=a.test,*.b.test\nbob {B}\n"
        );
        let tenants = parse_tenants("t", &text).unwrap();
        let server: Env = [
            ("COMPUTER_USE_HOST_PORTS".to_string(), "3000".to_string()),
            ("COMPUTER_USE_EGRESS".to_string(), "none".to_string()),
        ]
        .into();
        let alice = tenants[0].network_policy("t", &server).unwrap().unwrap();
        assert_eq!(alice.mode, network::EgressMode::Allowlist);
        assert_eq!(alice.allow.len(), 2);
        assert_eq!(
            alice.host_ports,
            [3000],
            "what the line leaves out is the server's"
        );
        assert_eq!(tenants[1].network_policy("t", &server).unwrap(), None);

        let bad = parse_tenants(
            "t",
            &format!("bob {B}\nalice {A} COMPUTER_USE_EGRESS=allowlist\n"),
        )
        .unwrap();
        let e = bad[1]
            .network_policy("t", &Env::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 2") && e.contains("alice") && e.contains("COMPUTER_USE_EGRESS_ALLOW"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_refuses_the_start() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tenants");
        std::fs::write(&path, format!("alice {A}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_tenants(&path).unwrap_err().to_string();
        assert!(e.contains("mode 0644"), "{e}");
        assert!(e.contains(&format!("chmod 600 {}", path.display())), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_tenants(&path).unwrap().len(), 1);
    }
}
