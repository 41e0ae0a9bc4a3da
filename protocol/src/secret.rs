//! Values that open something: computerd's API token and the viewer key
//! (also the VNC password), and [`Hidden`] for every other secret (a
//! cookie's value, a hand-back code, the X cookie, a tenant's token). Their
//! `Debug` says only that they are hidden, so a struct holding one derives
//! `Debug` and still shows it in no log line or panic message; no
//! hand-written `Debug` has to remember to leave a field out. Their value is
//! read with `expose`, where it is sent. On the wire they are what they
//! hold.

use serde::{Deserialize, Serialize};

/// computerd's API token: `Authorization: Bearer <token>` on every call.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Token(String);

/// The viewer key: the viewer page's `#key=`, and its first 8 characters
/// the VNC password. Checked where it is received
/// ([`crate::check_viewer_key`]).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ViewerKey(String);

macro_rules! secret {
    ($name:ident) => {
        impl $name {
            pub fn new(text: impl Into<String>) -> $name {
                $name(text.into())
            }

            /// The secret itself, for the request, link or file it goes in.
            pub fn expose(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($name), "(hidden)"))
            }
        }
    };
}

secret!(Token);
secret!(ViewerKey);

/// Any other secret value: a cookie's value, a hand-back code, a bearer
/// token of the HTTP server's, the X cookie's bytes.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Hidden<T>(T);

impl<T> Hidden<T> {
    pub fn new(value: T) -> Hidden<T> {
        Hidden(value)
    }

    /// The secret itself, for the request, header or file it goes in.
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> From<T> for Hidden<T> {
    fn from(value: T) -> Hidden<T> {
        Hidden(value)
    }
}

impl<T> std::fmt::Debug for Hidden<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(hidden)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_secret_and_the_wire_carries_it() {
        let key = ViewerKey::new("ab3d5fghjkmnpqrstuvwxyz23456789a");
        assert_eq!(format!("{key:?}"), "ViewerKey(hidden)");
        assert_eq!(
            format!("{:?}", Some(Token::new("t0ken"))),
            "Some(Token(hidden))"
        );
        assert_eq!(
            serde_json::to_string(&key).unwrap(),
            "\"ab3d5fghjkmnpqrstuvwxyz23456789a\""
        );
        let back: Token = serde_json::from_str("\"t0ken\"").unwrap();
        assert_eq!(back.expose(), "t0ken");
        let value = Hidden::new(String::from("s3ssion"));
        assert_eq!(format!("{:?}", [&value]), "[(hidden)]");
        assert_eq!(serde_json::to_string(&value).unwrap(), "\"s3ssion\"");
    }
}
