//! The viewer key: 32 characters made on the first start with a fresh home
//! and kept there, so viewer links and VNC passwords survive restarts. Its
//! first 8 characters are the screens' VNC password (classic VNC
//! authentication reads no more). A home from before keys were this long
//! holds an 8-character key: it becomes the new key's first 8, so a VNC
//! client that saved the password still connects.

use rand::Rng;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use computer_protocol::viewer::{
    is_valid_viewer_key as is_valid, vnc_password, VIEWER_KEY_ALPHABET, VIEWER_KEY_LEN,
    VNC_PASSWORD_LEN,
};

/// One rule for both sides: the host refuses any other key it is sent.
const ALPHABET: &[u8] = VIEWER_KEY_ALPHABET.as_bytes();
const KEY_LEN: usize = VIEWER_KEY_LEN;

#[derive(Debug, thiserror::Error)]
pub enum ViewerKeyError {
    #[error("could not read or write the viewer key at `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "could not make the VNC password file with `vncpasswd -f`: {0}; install tigervnc-tools"
    )]
    Vncpasswd(String),
}

/// The key (hidden from `Debug` by its type) and the VncAuth password
/// file Xvnc reads.
#[derive(Clone, Debug)]
pub struct ViewerKey {
    pub key: computer_protocol::ViewerKey,
    pub vnc_password_file: PathBuf,
}

/// Folder in home for computerd's own state.
pub fn state_dir(home: &Path) -> PathBuf {
    home.join(".local/share/computer-use")
}

impl ViewerKey {
    /// Loads the key from home, making it (and the password file) on first use.
    pub fn load_or_create(home: &Path) -> Result<ViewerKey, ViewerKeyError> {
        let dir = state_dir(home);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ViewerKeyError::Io { path, source }
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let key_path = dir.join("viewer-key");
        let key = match std::fs::read_to_string(&key_path) {
            Ok(text) if is_valid(text.trim()) => {
                // A key file from an older computerd, or copied in, may be
                // readable by others.
                std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600))
                    .map_err(io(&key_path))?;
                text.trim().to_string()
            }
            found => {
                let kept = found
                    .ok()
                    .map(|text| text.trim().to_string())
                    .filter(|old| is_short_key(old))
                    .unwrap_or_default();
                let key = format!("{kept}{}", generate(KEY_LEN - kept.len()));
                write_private(&key_path, key.as_bytes()).map_err(io(&key_path))?;
                key
            }
        };
        let vnc_password_file = dir.join("vncpasswd");
        write_vnc_password(vnc_password(&key), &vnc_password_file)?;
        Ok(ViewerKey {
            key: computer_protocol::ViewerKey::new(key),
            vnc_password_file,
        })
    }
}

/// An 8-character key of an older computerd (the VNC password it set).
fn is_short_key(text: &str) -> bool {
    text.len() == VNC_PASSWORD_LEN && text.bytes().all(|b| ALPHABET.contains(&b))
}

fn generate(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Xvnc wants the password in VNC's obfuscated form; `vncpasswd -f` writes it.
fn write_vnc_password(key: &str, path: &Path) -> Result<(), ViewerKeyError> {
    let mut child = Command::new("vncpasswd")
        .arg("-f")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ViewerKeyError::Vncpasswd(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(format!("{key}\n").as_bytes())
            .map_err(|e| ViewerKeyError::Vncpasswd(e.to_string()))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| ViewerKeyError::Vncpasswd(e.to_string()))?;
    if !out.status.success() || out.stdout.is_empty() {
        return Err(ViewerKeyError::Vncpasswd(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    write_private(path, &out.stdout).map_err(|source| ViewerKeyError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path`, readable by its owner only at every moment: a
/// new file is created 0600, an existing one is made 0600 before the secret
/// goes in.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_valid_and_differ() {
        let a = generate(KEY_LEN);
        let b = generate(KEY_LEN);
        assert!(is_valid(&a) && is_valid(&b));
        assert_ne!(a, b);
        assert!(!is_valid("short"));
        assert!(!is_valid("ABCDEFGH"));
    }

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn secret_files_are_private_even_when_they_existed() {
        let home = tempfile::tempdir().unwrap();
        let dir = state_dir(home.path());
        std::fs::create_dir_all(&dir).unwrap();
        let old_key = "ab3d5fghjkmnpqrstuvwxyz23456789a";
        for (name, content) in [("viewer-key", old_key), ("vncpasswd", "old")] {
            let path = dir.join(name);
            std::fs::write(&path, content).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let key = ViewerKey::load_or_create(home.path()).unwrap();
        assert_eq!(key.key.expose(), old_key);
        assert_eq!(mode_of(&dir.join("viewer-key")), 0o600);
        assert_eq!(mode_of(&key.vnc_password_file), 0o600);

        // Made from nothing.
        let fresh = tempfile::tempdir().unwrap();
        let key = ViewerKey::load_or_create(fresh.path()).unwrap();
        assert_eq!(mode_of(&state_dir(fresh.path()).join("viewer-key")), 0o600);
        assert_eq!(mode_of(&key.vnc_password_file), 0o600);
    }

    #[test]
    fn a_short_key_from_before_becomes_the_long_keys_vnc_password() {
        let home = tempfile::tempdir().unwrap();
        let dir = state_dir(home.path());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("viewer-key"), "ab3d5fgh\n").unwrap();
        let key = ViewerKey::load_or_create(home.path()).unwrap();
        assert!(is_valid(key.key.expose()), "{}", key.key.expose().len());
        assert_eq!(vnc_password(key.key.expose()), "ab3d5fgh");
        let again = ViewerKey::load_or_create(home.path()).unwrap();
        assert_eq!(again.key, key.key, "kept from then on");
    }
}
