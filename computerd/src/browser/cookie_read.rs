//! A `Storage.getCookies` answer read cookie by cookie, so one cookie that
//! does not fit [`Cookie`] costs only itself.
//!
//! A read feeds [`super::jar::Jar::absorb`], where a cookie missing from it
//! counts as removed and its removal spreads to every browser. So a cookie
//! that is there but unreadable (a field whose type changed in a Chromium
//! update) must never look missing: its identity is kept in
//! [`CookieRead::unreadable`], and when even that cannot be read,
//! [`CookieRead::unidentified`] says that no removal in this read can be
//! trusted.

use serde::Deserialize;
use serde_json::Value;

use super::cookie::{Cookie, CookieKey};

/// The cookies of one browser as far as they could be read.
#[derive(Debug, Default)]
pub struct CookieRead {
    pub cookies: Vec<Cookie>,
    /// Cookies the browser holds that did not parse, by identity: they
    /// are left as the jar last knew them.
    pub unreadable: Vec<CookieKey>,
    /// Cookies whose identity did not parse either: any cookie may be one
    /// of them, so nothing counts as removed in this read.
    pub unidentified: usize,
}

/// The answer had no `cookies` array: nothing in it can be trusted.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("the `Storage.getCookies` answer has no `cookies` array")]
pub struct NoCookiesArray;

impl CookieRead {
    /// Every cookie read, none unreadable.
    pub fn complete(cookies: Vec<Cookie>) -> CookieRead {
        CookieRead {
            cookies,
            ..CookieRead::default()
        }
    }

    /// How many cookies were skipped.
    pub fn skipped(&self) -> usize {
        self.unreadable.len() + self.unidentified
    }
}

impl From<Vec<Cookie>> for CookieRead {
    fn from(cookies: Vec<Cookie>) -> CookieRead {
        CookieRead::complete(cookies)
    }
}

/// The part of a cookie that says which one it is.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Identity {
    name: String,
    domain: String,
    path: String,
    #[serde(default)]
    partition_key: Option<Value>,
}

/// Reads the `result` of `Storage.getCookies`.
pub fn read_answer(answer: &Value) -> Result<CookieRead, NoCookiesArray> {
    let items = answer
        .get("cookies")
        .and_then(Value::as_array)
        .ok_or(NoCookiesArray)?;
    let mut read = CookieRead::default();
    for item in items {
        // serde's error text would quote the offending value, which may be
        // the login itself, so it is dropped here.
        if let Ok(cookie) = Cookie::deserialize(item) {
            read.cookies.push(cookie);
        } else if let Ok(identity) = Identity::deserialize(item) {
            read.unreadable.push(CookieKey::new(
                &identity.name,
                &identity.domain,
                &identity.path,
                identity.partition_key.as_ref(),
            ));
        } else {
            read.unidentified += 1;
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::cookie::tests::cookie;
    use serde_json::json;

    #[test]
    fn a_cookie_that_does_not_parse_is_kept_by_identity_and_the_rest_are_read() {
        let good = serde_json::to_value(cookie("sid", "1")).unwrap();
        let mut bad = serde_json::to_value(cookie("pref", "s3cr3t")).unwrap();
        bad["expires"] = json!("tomorrow");
        let read = read_answer(&json!({ "cookies": [good, bad, {"value": 1}] })).unwrap();
        assert_eq!(read.cookies, vec![cookie("sid", "1")]);
        assert_eq!(read.unreadable, vec![cookie("pref", "x").key()]);
        assert_eq!(read.unidentified, 1);
        assert_eq!(read.skipped(), 2);
        assert!(!format!("{read:?}").contains("s3cr3t"));
    }

    #[test]
    fn an_answer_without_a_cookies_array_is_refused() {
        for answer in [json!({}), json!({"cookies": null}), json!({"cookies": {}})] {
            assert_eq!(
                read_answer(&answer).unwrap_err(),
                NoCookiesArray,
                "{answer}"
            );
        }
        assert!(read_answer(&json!({"cookies": []}))
            .unwrap()
            .cookies
            .is_empty());
    }
}
