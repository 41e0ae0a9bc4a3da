//! The viewer as the host sees it: how many viewer pages are open, and
//! asking them to show a screen that just opened.

use crate::ids::ScreenNumber;
use crate::secret::{Hidden, ViewerKey};
use serde::{Deserialize, Serialize};

/// `GET /v1/viewer`, and the answer of `POST /v1/viewer/focus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerStatus {
    /// Viewer pages connected to computerd's live channel now. A best guess:
    /// a page in a browser that went to sleep may still count for a while.
    pub pages: u32,
}

/// `POST /v1/viewer/focus`: every open viewer page switches to `screen` and
/// highlights it in its sidebar. The answer says how many pages were told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FocusRequest {
    pub screen: ScreenNumber,
}

/// `POST /v1/viewer/code`: a one-time code the host puts in the link it
/// opens (`#code=`), so the key itself is in no command line. The viewer
/// page trades it for the key once, within [`VIEWER_CODE_TTL_SECS`].
/// Until used, the code opens the viewer: it is [`Hidden`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerCode {
    /// Made like a viewer key: [`VIEWER_KEY_LEN`] characters of
    /// [`VIEWER_KEY_ALPHABET`].
    pub code: Hidden<String>,
}

/// How long a [`ViewerCode`] may wait for the page to use it.
pub const VIEWER_CODE_TTL_SECS: u64 = 60;

/// The characters of a viewer key: lower-case letters and digits without
/// look-alikes (0/o, 1/l), so a key read off a log can be typed back.
pub const VIEWER_KEY_ALPHABET: &str = "abcdefghijkmnpqrstuvwxyz23456789";
/// A viewer key's length: 32 characters of a 32-letter alphabet, 160
/// bits, so no rate of guessing finds it and the viewer never has to refuse
/// a right key to slow guesses down (a budget that does lets anyone who can
/// send requests lock the person out).
pub const VIEWER_KEY_LEN: usize = 32;
/// The screens' VNC password is the key's first 8 characters: classic VNC
/// authentication reads no more (noVNC, given the whole key, uses those
/// 8). Xvnc slows guesses of it on the native ports itself.
pub const VNC_PASSWORD_LEN: usize = 8;

/// The viewer's link on the computer's machine, where its port base is
/// published on loopback: `http://127.0.0.1:<port_base>/#key=<key>`, with
/// `&screen=<n>` to open one screen. The key rides in the fragment, which a
/// browser never sends to a server or puts in a referrer. The one place
/// this link is spelled: computerd prints it, the host hands it out.
pub fn viewer_link(port_base: u16, key: &ViewerKey, screen: Option<u8>) -> String {
    fragment_link(port_base, "key", key.expose(), screen)
}

/// As [`viewer_link`], with a [`ViewerCode`] that opens the viewer once
/// instead of the lasting key.
pub fn code_link(port_base: u16, code: &str, screen: Option<u8>) -> String {
    fragment_link(port_base, "code", code, screen)
}

fn fragment_link(port_base: u16, name: &str, value: &str, screen: Option<u8>) -> String {
    let link = format!("http://127.0.0.1:{port_base}/#{name}={value}");
    match screen {
        Some(n) => format!("{link}&screen={n}"),
        None => link,
    }
}

/// The VNC password of viewer key `key` (its first 8 characters).
pub fn vnc_password(key: &str) -> &str {
    key.get(..VNC_PASSWORD_LEN).unwrap_or(key)
}

/// Whether `key` is a viewer key as computerd makes them. The host checks
/// every key it receives with this before putting it into a link or a
/// command line: a key from a tampered computer could otherwise carry
/// `&`, quotes or terminal escapes.
pub fn is_valid_viewer_key(key: &str) -> bool {
    key.len() == VIEWER_KEY_LEN
        && key
            .bytes()
            .all(|b| VIEWER_KEY_ALPHABET.as_bytes().contains(&b))
}

/// `GET /api/proof?nonce=N` on the viewer's port: the viewer answers this
/// for `nonce`, which only a holder of its key can make. The host asks
/// whatever holds a viewer port it could not bind, so that a program
/// squatting that port (and so given the key by the person's browser) is
/// told apart from another MCP server relaying the same computer, without
/// the key ever being sent.
pub fn viewer_proof(key: &str, nonce: &str) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(key.as_bytes())
        .expect("HMAC takes any key");
    mac.update(b"computer-use viewer proof\n");
    mac.update(nonce.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A proof's nonce: 32 to 128 lower-case hex digits.
pub fn is_valid_proof_nonce(nonce: &str) -> bool {
    (32..=128).contains(&nonce.len())
        && nonce
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A viewer key that breaks the rule of [`is_valid_viewer_key`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the computer sent an invalid viewer key ({shown}): a key is {VIEWER_KEY_LEN} characters of `{VIEWER_KEY_ALPHABET}`. The computer may have been tampered with; remove the container with `docker rm -f <name>` (its home volume stays) and call start_computer again")]
pub struct InvalidViewerKey {
    /// The key escaped and shortened, safe to print.
    pub shown: String,
}

/// `key` when it is valid, or the error that says it is not.
pub fn check_viewer_key(key: &str) -> Result<&str, InvalidViewerKey> {
    if is_valid_viewer_key(key) {
        return Ok(key);
    }
    // Escaped (no terminal escapes reach a log) and short (no flood).
    let mut shown: String = format!("{:?}", key.chars().take(16).collect::<String>());
    if key.chars().count() > 16 {
        shown.push_str(" and more");
    }
    Err(InvalidViewerKey { shown })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "ab3d5fghjkmnpqrstuvwxyz23456789a";

    #[test]
    fn a_proof_depends_on_the_key_and_the_nonce() {
        let nonce = "0123456789abcdef0123456789abcdef";
        let proof = viewer_proof(KEY, nonce);
        assert_eq!(proof.len(), 64);
        assert_eq!(proof, viewer_proof(KEY, nonce));
        assert_ne!(
            proof,
            viewer_proof("bb3d5fghjkmnpqrstuvwxyz23456789a", nonce)
        );
        assert_ne!(proof, viewer_proof(KEY, "1123456789abcdef0123456789abcdef"));
        assert!(is_valid_proof_nonce(nonce));
        assert!(!is_valid_proof_nonce("0123"));
        assert!(!is_valid_proof_nonce(&"A".repeat(32)));
    }

    #[test]
    fn links_carry_the_key_or_code_in_the_fragment() {
        assert_eq!(
            viewer_link(20900, &ViewerKey::new(KEY), None),
            format!("http://127.0.0.1:20900/#key={KEY}")
        );
        assert_eq!(
            viewer_link(20900, &ViewerKey::new(KEY), Some(3)),
            format!("http://127.0.0.1:20900/#key={KEY}&screen=3")
        );
        assert_eq!(
            code_link(20900, "c0de", Some(16)),
            "http://127.0.0.1:20900/#code=c0de&screen=16"
        );
    }

    #[test]
    fn keys_follow_the_alphabet_and_length() {
        assert!(is_valid_viewer_key(KEY));
        assert!(is_valid_viewer_key(&"zz23n9mk".repeat(4)));
        assert_eq!(vnc_password(KEY), "ab3d5fgh");
        for bad in [
            "",
            "abcdefgh",
            &KEY[1..],
            &format!("{KEY}a"),
            "AB&C",
            "x\"y",
            "x&calc&x",
            "abcdefg0",
            "abcdefgl",
            "abc efgh",
            "abcdéfg",
            "x@a.b:59",
        ] {
            assert!(!is_valid_viewer_key(bad), "{bad:?} passed");
        }
    }

    #[test]
    fn a_bad_key_is_shown_escaped_and_short() {
        let e = check_viewer_key("x&calc\u{1b}]52;c;AAAA\u{7}-and-then-some-more").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("the computer sent an invalid viewer key"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains("and more"), "{text}");
        assert_eq!(check_viewer_key(KEY), Ok(KEY));
    }
}
