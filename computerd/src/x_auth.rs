//! Who may use the screens' X servers, and with what rights.
//!
//! Every Xvnc starts with `-auth` and one cookie that computerd makes when
//! it starts: the "desktop" cookie. computerd's own connections, Fluxbox
//! (and so its menu's apps), the browsers, launched apps and the
//! accessibility bus get it, through `XAUTHORITY`.
//!
//! The agent's `shell` gets another cookie per screen, made by the X server
//! itself through the SECURITY extension as *untrusted*. A program started
//! with it sees the core protocol only: no XTEST (it cannot type or click),
//! no RECORD and no XInput (it cannot log keys), and no events, names or
//! pixels of the desktop's windows. So a key logger the agent's code starts
//! while a person types in a handoff sees nothing, and nor does `xdotool`.
//!
//! This binds programs that use the environment they are given. It is not
//! a wall against root in the computer (the agent has sudo), nor against a
//! program of the same user that goes looking for the desktop's cookie
//! file: those can open the display as trusted. The README says so.
//!
//! The cookie is a fact of the whole process, like the display base: every
//! X connection computerd opens, wherever in the code, must carry it, and
//! every Xvnc must be started with it. [`install`] sets it once at start;
//! until then (the library inside a test program) X servers start without
//! `-auth` and connections carry no cookie.

use computer_protocol::Hidden;
use std::io::{self, IoSlice, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use x11rb::connection::RequestConnection;
use x11rb::errors::ParseError;
use x11rb::rust_connection::RustConnection;
use x11rb::x11_utils::TryParse;

/// The only authorization protocol the cookies use.
pub const COOKIE_PROTOCOL: &str = "MIT-MAGIC-COOKIE-1";
/// Bytes in a desktop cookie.
const COOKIE_LEN: usize = 16;
/// `FamilyWild` in an Xauthority file: the entry fits any host.
const FAMILY_WILD: u16 = 0xffff;

/// The SECURITY extension's request that makes a cookie.
const GENERATE_AUTHORIZATION: u8 = 1;
/// Its value mask: a timeout, then a trust level.
const VALUE_TIMEOUT: u32 = 1 << 0;
const VALUE_TRUST_LEVEL: u32 = 1 << 1;
/// The trust level the agent's cookie gets.
const UNTRUSTED: u32 = 1;

static INSTALLED: OnceLock<XAuth> = OnceLock::new();

#[derive(Debug, thiserror::Error)]
pub enum XAuthError {
    #[error("cannot write the X cookie file `{path}`: {source}")]
    File { path: PathBuf, source: io::Error },
    #[error("display :{display} has no SECURITY extension, so the agent's shell cannot get a cookie of its own: use an Xvnc built with it")]
    NoSecurityExtension { display: u32 },
    #[error("display :{display} refused to make a cookie for the agent's shell: {reason}")]
    Refused { display: u32, reason: String },
}

/// The desktop cookie and where the cookie files are. The cookie is
/// [`Hidden`] from logs and panic messages.
#[derive(Debug)]
pub struct XAuth {
    cookie: Hidden<[u8; COOKIE_LEN]>,
    folder: PathBuf,
}

/// Makes the desktop cookie, writes its file (mode 0600) in `folder`, and
/// makes it the one every later X server and connection of this process
/// uses. A second call keeps the first cookie.
pub fn install(folder: &Path) -> Result<&'static XAuth, XAuthError> {
    if let Some(installed) = INSTALLED.get() {
        return Ok(installed);
    }
    let auth = XAuth {
        cookie: Hidden::new(rand::random()),
        folder: folder.to_path_buf(),
    };
    let entry = XauthEntry {
        display: None,
        data: auth.cookie.expose().to_vec(),
    };
    write_private(&auth.desktop_file(), &entry.encode())?;
    Ok(INSTALLED.get_or_init(|| auth))
}

/// The installed cookie, if [`install`] ran.
pub fn installed() -> Option<&'static XAuth> {
    INSTALLED.get()
}

impl XAuth {
    /// The desktop's Xauthority file: what Xvnc's `-auth` reads and what
    /// the desktop's programs get as `XAUTHORITY`.
    pub fn desktop_file(&self) -> PathBuf {
        self.folder.join("x-desktop-cookie")
    }

    /// The Xauthority file of the agent's shell on display `:display`.
    pub fn agent_file(&self, display: u32) -> PathBuf {
        self.folder.join(format!("x-agent-cookie-{display}"))
    }

    /// The desktop cookie, for computerd's own connections.
    pub fn cookie(&self) -> &[u8] {
        self.cookie.expose()
    }

    /// Asks display `:number`'s X server, over a connection with the
    /// desktop cookie, for an untrusted cookie that never
    /// expires, and writes it to [`XAuth::agent_file`]. The file is
    /// replaced whole, so a shell never reads half of it.
    pub fn make_agent_cookie(&self, conn: &RustConnection, number: u32) -> Result<(), XAuthError> {
        let refused = |reason: &dyn std::fmt::Display| XAuthError::Refused {
            display: number,
            reason: reason.to_string(),
        };
        let security = conn
            .extension_information("SECURITY")
            .map_err(|e| refused(&e))?
            .ok_or(XAuthError::NoSecurityExtension { display: number })?;
        let request = generate_untrusted_request(security.major_opcode);
        let reply: Generated = conn
            .send_request_with_reply(&[IoSlice::new(&request)], Vec::new())
            .map_err(|e| refused(&e))?
            .reply()
            .map_err(|e| refused(&e))?;
        let entry = XauthEntry {
            display: Some(number),
            data: reply.data,
        };
        let file = self.agent_file(number);
        let staging = self.folder.join(format!(".x-agent-cookie-{number}.new"));
        write_private(&staging, &entry.encode())?;
        std::fs::rename(&staging, &file).map_err(|source| XAuthError::File { path: file, source })
    }
}

/// `SecurityGenerateAuthorization` for an MIT cookie the server makes
/// itself (no data given), untrusted, with no timeout: with a timeout the
/// server would drop the cookie once no client had used it for that long.
fn generate_untrusted_request(major_opcode: u8) -> Vec<u8> {
    let protocol = COOKIE_PROTOCOL.as_bytes();
    let padded = protocol.len().div_ceil(4) * 4;
    // Header (4), the two lengths (4), the mask (4), the name, two values.
    let len = 12 + padded + 8;
    let mut request = Vec::with_capacity(len);
    request.extend([major_opcode, GENERATE_AUTHORIZATION]);
    request.extend(((len / 4) as u16).to_ne_bytes());
    request.extend((protocol.len() as u16).to_ne_bytes());
    request.extend(0u16.to_ne_bytes());
    request.extend((VALUE_TIMEOUT | VALUE_TRUST_LEVEL).to_ne_bytes());
    request.extend(protocol);
    request.resize(12 + padded, 0);
    request.extend(0u32.to_ne_bytes());
    request.extend(UNTRUSTED.to_ne_bytes());
    request
}

/// The reply to [`generate_untrusted_request`]: the cookie the server made.
struct Generated {
    data: Vec<u8>,
}

impl TryParse for Generated {
    fn try_parse(value: &[u8]) -> Result<(Self, &[u8]), ParseError> {
        // type, pad, sequence (2), length (4), auth id (4), data length (2),
        // then padding to 32 bytes and the data.
        let header = value.get(..32).ok_or(ParseError::InsufficientData)?;
        let data_len = usize::from(u16::from_ne_bytes([header[12], header[13]]));
        let data = value
            .get(32..32 + data_len)
            .ok_or(ParseError::InsufficientData)?;
        let words = u32::from_ne_bytes([header[4], header[5], header[6], header[7]]) as usize;
        let rest = value.get(32 + words * 4..).unwrap_or(&[]);
        Ok((
            Generated {
                data: data.to_vec(),
            },
            rest,
        ))
    }
}

/// One entry of an Xauthority file: a cookie for every host, for one
/// display number or (`None`) for any.
struct XauthEntry {
    display: Option<u32>,
    data: Vec<u8>,
}

impl XauthEntry {
    /// The file's format: family, then address, display number, protocol
    /// name and data, each a big-endian 16-bit length and the bytes.
    fn encode(&self) -> Vec<u8> {
        let number = self.display.map(|d| d.to_string()).unwrap_or_default();
        let mut out = FAMILY_WILD.to_be_bytes().to_vec();
        for field in [
            &[][..],
            number.as_bytes(),
            COOKIE_PROTOCOL.as_bytes(),
            &self.data,
        ] {
            out.extend((field.len() as u16).to_be_bytes());
            out.extend(field);
        }
        out
    }
}

/// Writes `bytes` to a new file at `path` that only its owner may read.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), XAuthError> {
    let failed = |source| XAuthError::File {
        path: path.to_path_buf(),
        source,
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(failed)?;
    }
    // Removed first: a file left by an older run may be readable by others,
    // and `mode` applies only to a file this call creates.
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(failed(e)),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(failed)?;
    file.write_all(bytes).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_for_one_display_is_laid_out_as_xauth_reads_it() {
        let entry = XauthEntry {
            display: Some(12),
            data: vec![0xab; 16],
        };
        let mut expected = vec![0xff, 0xff, 0, 0, 0, 2, b'1', b'2', 0, 18];
        expected.extend(b"MIT-MAGIC-COOKIE-1");
        expected.extend([0, 16]);
        expected.extend([0xab; 16]);
        assert_eq!(entry.encode(), expected);
    }

    #[test]
    fn an_entry_for_any_display_has_no_number() {
        let entry = XauthEntry {
            display: None,
            data: vec![1, 2],
        };
        assert_eq!(&entry.encode()[..6], &[0xff, 0xff, 0, 0, 0, 0]);
    }

    #[test]
    fn the_request_is_whole_words_and_asks_for_untrusted_without_timeout() {
        let request = generate_untrusted_request(140);
        assert_eq!(request.len() % 4, 0);
        assert_eq!(&request[..2], &[140, GENERATE_AUTHORIZATION]);
        let words = u16::from_ne_bytes([request[2], request[3]]) as usize;
        assert_eq!(words * 4, request.len());
        let tail = &request[request.len() - 8..];
        assert_eq!(tail[..4], 0u32.to_ne_bytes());
        assert_eq!(tail[4..], UNTRUSTED.to_ne_bytes());
    }

    #[test]
    fn a_reply_gives_its_cookie() {
        let mut reply = vec![1, 0, 5, 0];
        reply.extend(4u32.to_ne_bytes());
        reply.extend(77u32.to_ne_bytes());
        reply.extend(16u16.to_ne_bytes());
        reply.resize(32, 0);
        reply.extend([9; 16]);
        let (parsed, rest) = Generated::try_parse(&reply).unwrap();
        assert_eq!(parsed.data, vec![9; 16]);
        assert!(rest.is_empty());
        assert!(Generated::try_parse(&reply[..40]).is_err());
    }

    #[test]
    fn cookie_files_are_private_and_replace_older_ones() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookie");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
